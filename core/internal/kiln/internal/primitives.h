// The shared primitives (base/: bounded reader, checked arithmetic, UTF-8),
// named in the parser's namespace. Internal: no public header includes it.
#ifndef KILN_INTERNAL_PRIMITIVES_H_
#define KILN_INTERNAL_PRIMITIVES_H_

#include "kiln/base/bytes.h"
#include "kiln/base/checked.h"
#include "kiln/base/utf8.h"

namespace kiln::internal {

using base::AlignUp64;
using base::ByteReader;
using base::Bytes;
using base::CeilDiv;
using base::CheckedAdd;
using base::CheckedMul;
using base::FirstInvalidUtf8;
using base::FirstNonzero;
using base::LoadLe;
using base::StoreLe;

}  // namespace kiln::internal

#endif  // KILN_INTERNAL_PRIMITIVES_H_
