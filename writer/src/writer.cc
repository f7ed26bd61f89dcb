// BlockWriter: canonical blocks, checked with the format core's rule checks
// (the parser's own); BlockPlan: a sealed block that writes itself.
#include "kiln/writer.h"

#include <algorithm>
#include <atomic>

#include "kiln/base/escape.h"
#include "kiln/base/format.h"
#include "kiln/base/output_file.h"
#include "kiln/internal/primitives.h"
#include "kiln/internal/rules.h"
#include "kiln/internal/write_observer.h"
#include "kiln/utf8.h"

namespace kiln {
namespace {

using base::Format;
using internal::Check;
using internal::DescriptorFieldOffset;
using internal::Fail;
using internal::FailTensor;
namespace desc = internal::desc;

constexpr std::size_t kChunk = std::size_t{1} << 20;

using base::Quoted;  // a name in a message: escaped, in quotes, cut after 64 bytes

// The test's observer (kiln/internal/write_observer.h); none in production.
std::atomic<internal::WriteObserver> write_observer{nullptr};

void Observe(internal::WriteStep step) {
  if (const internal::WriteObserver observer = write_observer.load(std::memory_order_relaxed)) {
    observer(step);
  }
}

// The descriptor of request r, stored at [offset, offset + length) of the
// payload region. Heap offsets are placeholders: a named tensor's name_off
// and a layout name's layout_off are 0 (any value but 0xFFFF passes the same
// rules) until the directory is built.
internal::RawDescriptor DescriptorOf(const TensorRequest& r, std::uint64_t offset,
                                     std::uint64_t length) {
  internal::RawDescriptor d;
  d.dtype = static_cast<std::uint16_t>(r.dtype);
  d.rank = static_cast<std::uint8_t>(r.shape.size());  // <= 8, checked before
  d.name_off = r.name.empty() ? kNoHeapSlice : 0;
  d.name_len = static_cast<std::uint16_t>(r.name.size());  // <= 0xFFFF, checked before
  d.layout_off = r.layout.empty() ? kNoHeapSlice : 0;
  d.layout_len = static_cast<std::uint16_t>(r.layout.size());
  d.block_size = r.block_size;
  d.quant_scheme = static_cast<std::uint16_t>(r.scheme);
  d.quant_axis = r.axis;
  d.group_size = r.group_size;
  d.scale_index = r.scale_index.value_or(kNoTensor);
  d.outer_index = r.outer_index.value_or(kNoTensor);
  d.byte_offset = offset;
  d.byte_length = length;
  std::copy(r.shape.begin(), r.shape.end(), d.shape.begin());
  return d;
}

// The header of a block.
void EncodeHeader(std::span<std::uint8_t, kHeaderSize> b, const HeaderInfo& h) {
  std::copy_n("KLNT", 4, b.begin());
  internal::StoreLe<internal::hdr::kVersion>(b, internal::hdr::kVersion2);
  internal::StoreLe<internal::hdr::kFlags>(b, h.flags);
  internal::StoreLe<internal::hdr::kTensorCount>(b, h.tensor_count);
  internal::StoreLe<internal::hdr::kNameBytes>(b, h.name_bytes);
  internal::StoreLe<internal::hdr::kPayloadBytes>(b, h.payload_bytes);
  internal::StoreLe<internal::hdr::kDirectoryBytes>(b, h.directory_bytes);
}

}  // namespace

internal::WriteObserver internal::SetWriteObserver(internal::WriteObserver observer) {
  return write_observer.exchange(observer);
}

Payload Payload::Bytes(std::span<const std::uint8_t> bytes) {
  Payload p;
  p.size_ = bytes.size();
  p.bytes_ = bytes;
  return p;
}

Payload Payload::Stream(std::uint64_t size, PayloadReader read) {
  Payload p;
  p.size_ = size;
  p.read_ = std::move(read);
  return p;
}

// Add, step by step: the request's sizes, its canonical place, the
// parser's check of its fields, its names against the block so far, then
// the one encode.
Result<std::uint32_t> BlockWriter::Add(const TensorRequest& r, Payload payload) {
  const auto i = static_cast<std::uint32_t>(tensors_.size());
  if (Check e = CheckSizes(r, i)) return *std::move(e);
  const Result<std::uint64_t> offset = Place(payload.size(), i);
  if (!offset.ok()) return offset.error();
  // D1..D10, N1, N2 (for this tensor), O1..O3, Q1..Q4: the parser's own
  // check of a descriptor's fields, on the request's fields as tensor i of a
  // block whose payload region ends where this payload does.
  const std::uint64_t length = payload.size();
  const internal::RawDescriptor d = DescriptorOf(r, offset.value(), length);
  HeaderInfo block;
  block.flags = static_cast<std::uint8_t>(kFlagLittleEndian | (r.name.empty() ? 0 : kFlagNames));
  block.payload_bytes = internal::CheckedAdd(offset.value(), length).value_or(~std::uint64_t{0});
  if (Check e = internal::CheckFields(d, i, block)) return *std::move(e);
  if (Check e = CheckNames(r, i)) return *std::move(e);
  Store(r, d, std::move(payload));
  return i;
}

// The bounds a request must meet before anything is laid out: a tensor
// index below 2^32-1, at most 8 dimensions, names that fit name_len.
std::optional<Error> BlockWriter::CheckSizes(const TensorRequest& r, std::uint32_t i) const {
  if (tensors_.size() >= kNoTensor) {
    return Fail(Rule::H7, 8, "tensor_count cannot exceed 2^32-1");
  }
  if (r.shape.size() > kMaxRank) {
    return FailTensor(Rule::D2, DescriptorFieldOffset(i, desc::kRank), i, "rank is %d, at most 8",
                      r.shape.size());
  }
  if (r.name.size() > 0xFFFF || r.layout.size() > 0xFFFF) {
    return FailTensor(Rule::H7, DescriptorFieldOffset(i, desc::kNameLen), i,
                      "a name or layout name of %d bytes does not fit name_len (a u16)",
                      std::max(r.name.size(), r.layout.size()));
  }
  return std::nullopt;
}

// Canonical placement: a zero-length payload at 0, any other at the next
// multiple of 64 after the previous payload.
Result<std::uint64_t> BlockWriter::Place(std::uint64_t length, std::uint32_t i) const {
  if (length == 0) return std::uint64_t{0};
  const auto aligned = internal::AlignUp64(payload_end_);
  if (!aligned) {
    return FailTensor(Rule::H7, DescriptorFieldOffset(i, desc::kByteOffset), i,
                      "the payloads before this tensor already end at %d", payload_end_);
  }
  return *aligned;
}

// The rules on names that need the tensors added before: N2 across tensors
// (all named or all unnamed), room in the heap for the name, N4 (UTF-8)
// and N5 (unique).
std::optional<Error> BlockWriter::CheckNames(const TensorRequest& r, std::uint32_t i) const {
  if (!r.name.empty() && first_unnamed_) {
    return FailTensor(Rule::N2, DescriptorFieldOffset(*first_unnamed_, desc::kNameOff),
                      *first_unnamed_,
                      "tensor %d is unnamed, but tensor %d is named: once one tensor has a name, "
                      "every tensor needs one",
                      *first_unnamed_, i);
  }
  if (r.name.empty() && !name_index_.empty()) {
    return FailTensor(Rule::N2, DescriptorFieldOffset(i, desc::kNameOff), i,
                      "tensor %d is unnamed, but earlier tensors are named", i);
  }
  if (!r.name.empty() && names_.size() >= kNoHeapSlice) {
    return FailTensor(Rule::H7, DescriptorFieldOffset(i, desc::kNameOff), i,
                      "name %s would start at heap offset %d, but name_off is a u16 below 0xffff "
                      "(the heap holds about 64 KiB of names)",
                      Quoted(r.name), names_.size());
  }
  const std::string* const texts[] = {&r.name, &r.layout};
  if (const auto bad = std::find_if(std::begin(texts), std::end(texts),
                                    [](const std::string* t) { return !IsWellFormedUtf8(*t); });
      bad != std::end(texts)) {
    return FailTensor(Rule::N4, DescriptorFieldOffset(i, desc::kNameOff), i,
                      "%s %s is not well-formed UTF-8", *bad == &r.name ? "name" : "layout name",
                      Quoted(**bad));
  }
  if (!r.name.empty()) {
    if (const auto it = name_index_.find(r.name); it != name_index_.end()) {
      return FailTensor(Rule::N5, DescriptorFieldOffset(i, desc::kNameOff), i,
                        "name %s repeats the name of tensor %d", Quoted(r.name), it->second);
    }
  }
  return std::nullopt;
}

// Keeps a checked tensor: its descriptor encoded once (with its name's
// heap offset), its payload, and the block's names and payload end.
void BlockWriter::Store(const TensorRequest& r, internal::RawDescriptor d, Payload payload) {
  const auto i = static_cast<std::uint32_t>(tensors_.size());
  if (!r.name.empty()) d.name_off = static_cast<std::uint16_t>(names_.size());  // < 0xFFFF
  Entry entry;
  entry.descriptor = internal::EncodeDescriptor(d);  // the one encode of this tensor
  Observe(internal::WriteStep::kDescriptorEncode);
  decoded_.push_back(d);
  entry.layout = r.layout;
  entry.offset = d.byte_offset;
  entry.length = d.byte_length;
  entry.payload = std::move(payload);
  if (entry.length != 0) payload_end_ = entry.offset + entry.length;  // checked by CheckFields
  tensors_.push_back(std::move(entry));
  if (r.name.empty()) {
    if (!first_unnamed_) first_unnamed_ = i;
  } else {
    name_index_.emplace(r.name, i);
    names_ += r.name;
  }
}

BlockWriter::BlockWriter() = default;
BlockWriter::~BlockWriter() = default;
BlockWriter::BlockWriter(const BlockWriter&) = default;
BlockWriter::BlockWriter(BlockWriter&&) noexcept = default;
BlockWriter& BlockWriter::operator=(const BlockWriter&) = default;
BlockWriter& BlockWriter::operator=(BlockWriter&&) noexcept = default;

Result<BlockPlan> BlockWriter::Plan() const {
  Observe(internal::WriteStep::kDirectoryBuild);
  // Layout names follow the tensor names in the heap: each layout_off is
  // known now. The decoded descriptors get it too, for Q5..Q7 below.
  std::vector<internal::RawDescriptor> descriptors = decoded_;
  std::uint64_t heap_size = names_.size();
  for (std::uint32_t i = 0; i < tensor_count(); ++i) {
    if (tensors_[i].layout.empty()) continue;
    if (heap_size >= kNoHeapSlice) {
      return FailTensor(Rule::H7, DescriptorFieldOffset(i, desc::kLayoutOff), i,
                        "layout name would start at heap offset %d, but layout_off is a u16 "
                        "below 0xffff",
                        heap_size);
    }
    descriptors[i].layout_off = static_cast<std::uint16_t>(heap_size);
    heap_size += tensors_[i].layout.size();
  }
  HeaderInfo h;
  h.tensor_count = tensor_count();
  h.flags = static_cast<std::uint8_t>(kFlagLittleEndian | (name_index_.empty() ? 0 : kFlagNames));
  h.name_bytes = static_cast<std::uint32_t>(heap_size);  // < 2 * 0xffff
  h.directory_bytes = std::uint64_t{kDescriptorSize} * h.tensor_count + h.name_bytes;
  h.payload_bytes = payload_end_;
  h.payload_base = *internal::AlignUp64(kHeaderSize + h.directory_bytes);  // < 2^40
  const auto block_length = internal::CheckedAdd(h.payload_base, h.payload_bytes);
  if (!block_length) {
    return Fail(Rule::H7, 16, "payload_base %d + payload_bytes %d exceeds 2^64-1", h.payload_base,
                h.payload_bytes);
  }
  h.block_length = *block_length;
  // Q5..Q7 need every tensor: the parser's check of each quantised tensor's
  // references, on the descriptors as they will be written.
  const auto at = [&descriptors](std::uint32_t j) { return descriptors[j]; };
  for (std::uint32_t i = 0; i < tensor_count(); ++i) {
    if (Check e = internal::CheckQuantRefs(descriptors[i], i, tensor_count(), at)) {
      return *std::move(e);
    }
  }
  std::vector<std::uint8_t> head(h.payload_base, 0);
  EncodeHeader(std::span(head).first<kHeaderSize>(), h);
  for (std::uint32_t i = 0; i < tensor_count(); ++i) {
    const auto record = std::span(head)
                            .subspan(static_cast<std::size_t>(internal::HeapStart(i)))
                            .first<kDescriptorSize>();
    std::copy(tensors_[i].descriptor.begin(), tensors_[i].descriptor.end(), record.begin());
    if (!tensors_[i].layout.empty()) {
      internal::StoreLe<desc::kLayoutOff>(record, descriptors[i].layout_off);
    }
  }
  auto heap = head.begin() + static_cast<std::ptrdiff_t>(internal::HeapStart(h.tensor_count));
  heap = std::copy(names_.begin(), names_.end(), heap);
  for (const Entry& t : tensors_) heap = std::copy(t.layout.begin(), t.layout.end(), heap);
  return BlockPlan(this, std::move(head), payload_end_);
}

Result<std::uint64_t, WriteError> BlockPlan::WriteTo(const ByteSink& sink) const {
  auto refused = [](std::uint64_t at) {
    return WriteError{
        {}, 0, Format("the sink refused the block's bytes at %d", at), WriteError::Step::kWrite};
  };
  std::uint64_t written = head_.size();
  if (!sink(head_)) return refused(0);
  static const std::vector<std::uint8_t> kZeros(kPayloadAlignment, 0);
  std::vector<std::uint8_t> buffer;
  std::uint64_t cursor = 0;  // within the payload region
  for (std::uint32_t i = 0; i < writer_->tensor_count(); ++i) {
    const BlockWriter::Entry& t = writer_->tensors_[i];
    if (t.length == 0) continue;
    if (!sink(std::span(kZeros).first(t.offset - cursor))) return refused(written);
    written += t.offset - cursor;
    if (!t.payload.read_) {
      if (!sink(t.payload.bytes_)) return refused(written);
    } else {
      for (std::uint64_t left = t.length; left != 0;) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, kChunk));
        buffer.resize(n);
        const std::uint64_t at = written + (t.length - left);
        if (!t.payload.read_(buffer)) {
          return WriteError{{},
                            0,
                            Format("the payload source of tensor %d ended %d bytes before its "
                                   "%d bytes",
                                   i, left, t.length),
                            WriteError::Step::kPayload};
        }
        if (!sink(buffer)) return refused(at);
        left -= n;
      }
    }
    written += t.length;
    cursor = t.offset + t.length;
  }
  return written;
}

Result<std::vector<std::uint8_t>, WriteError> BlockPlan::WriteToMemory() const {
  std::vector<std::uint8_t> out;
  Result<std::uint64_t, WriteError> n = WriteTo([&](std::span<const std::uint8_t> b) {
    out.insert(out.end(), b.begin(), b.end());
    return true;
  });
  if (!n.ok()) return n.error();
  return out;
}

Result<std::uint64_t, WriteError> BlockPlan::WriteToFile(
    const std::string& path, const std::function<bool()>& before_commit) const {
  base::OutputFile file(path);
  auto io_error = [&](WriteError::Step step) {
    return WriteError{path, file.error_number(), file.error(), step};
  };
  if (!file.ok()) return io_error(WriteError::Step::kCreate);
  Result<std::uint64_t, WriteError> n =
      WriteTo([&](std::span<const std::uint8_t> b) { return file.Write(b); });
  if (!file.ok()) return io_error(WriteError::Step::kWrite);  // the sink refused: the file's error
  if (!n.ok()) {                                              // a stream payload ended early
    WriteError e = n.error();
    e.path = path;
    return e;
  }
  if (before_commit && !before_commit()) {
    return WriteError{path, 0, "not committed: the step before the commit failed",
                      WriteError::Step::kBeforeCommit};
  }
  if (!file.Commit()) return io_error(WriteError::Step::kCommit);
  return n.value();
}

std::string WriteError::ToString() const {
  return (path.empty() ? std::string("cannot write the block") : "cannot write " + path) + ": " +
         message;
}

Result<BlockWriter> BlockWriter::From(const kiln::Directory& directory) {
  BlockWriter w;
  for (std::uint32_t i = 0; i < directory.tensor_count(); ++i) {
    const Tensor t = directory.tensor(i);
    TensorRequest r;
    r.name = std::string(t.name);
    r.dtype = t.dtype;
    r.shape.assign(t.dims().begin(), t.dims().end());
    r.layout = std::string(t.layout);
    r.block_size = t.block_size;
    r.scheme = t.quant.scheme;
    r.axis = t.quant.axis;
    r.group_size = t.quant.group_size;
    r.scale_index = t.quant.scale_index;
    r.outer_index = t.quant.outer_index;
    Result<std::uint32_t> added = w.Add(r, Payload::Bytes(t.payload));
    if (!added.ok()) return added.error();
  }
  return w;
}

}  // namespace kiln
