// Umbrella header for the kiln library.
#ifndef KILN_KILN_H_
#define KILN_KILN_H_

#include "kiln/directory.h"      // IWYU pragma: export
#include "kiln/dtype.h"          // IWYU pragma: export
#include "kiln/random_access.h"  // IWYU pragma: export
#include "kiln/status.h"         // IWYU pragma: export
#include "kiln/stream.h"         // IWYU pragma: export
#include "kiln/utf8.h"           // IWYU pragma: export

#endif  // KILN_KILN_H_
