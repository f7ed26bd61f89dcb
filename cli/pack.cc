// kiln pack: NumPy .npy files into one Kiln block.
#include <memory>

#include "absl/strings/str_format.h"
#include "commands.h"
#include "flags.h"
#include "kiln/formats/npy.h"
#include "kiln/writer.h"
#include "mapped_file.h"
#include "progress.h"
#include "reader_limits.h"
#include "report.h"
#include "source_payload.h"
#include "write_block.h"

namespace kiln::cli {
namespace {

struct Input {
  std::string name;
  std::string path;
  std::unique_ptr<MappedFile> file;  // mapped until the block is written
  formats::NpyArray array;
};

int PackUsage(std::ostream& err, const std::string& why) {
  err << "kiln pack: " << why
      << "\nusage: kiln pack [--max-tensors N] [--max-block-bytes N] OUT.klnt NAME=FILE.npy...\n";
  return kExitUsage;
}

// Maps and reads one NAME=FILE.npy argument; an exit code when it fails.
std::optional<int> Load(const std::string& arg, const formats::ReaderLimits& limits, Input* in,
                        std::ostream& err) {
  const std::size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) {
    return PackUsage(err, "argument \"" + base::Escape(arg) + "\" is not NAME=FILE.npy");
  }
  in->name = arg.substr(0, eq);
  in->path = arg.substr(eq + 1);
  in->file = std::make_unique<MappedFile>(in->path);
  if (!in->file->ok()) {
    err << "kiln pack: " << base::Escape(in->path) << ": " << in->file->error() << "\n";
    return kExitUsage;
  }
  formats::FormatResult<formats::NpyArray> a = formats::ReadNpy(in->file->bytes(), limits);
  if (!a.ok()) {
    err << "kiln pack: " << base::Escape(in->path) << ": " << a.error().ToString() << "\n";
    return kExitInvalid;
  }
  in->array = std::move(a).value();
  return std::nullopt;
}

}  // namespace

int RunPack(const std::vector<std::string>& all_args, std::ostream& out, std::ostream& err) {
  InputLimits limits;
  std::vector<std::string> args;
  for (std::size_t i = 0; i < all_args.size(); ++i) {
    std::string why;
    const FlagParse f =
        ParsePolicyFlag(all_args, &i, {"--max-tensors", "--max-block-bytes"}, &limits, &why);
    if (f == FlagParse::kBadValue) return PackUsage(err, why);
    if (f == FlagParse::kNotALimit) args.push_back(all_args[i]);
  }
  if (args.empty() || args[0].starts_with("-")) return PackUsage(err, "missing OUT.klnt");
  if (args.size() < 2) return PackUsage(err, "no NAME=FILE.npy given");
  if (args.size() - 1 > limits.reader.max_tensors) {
    err << absl::StrFormat("kiln pack: LIMIT H7: %d tensors, more than --max-tensors %d\n",
                           args.size() - 1, limits.reader.max_tensors);
    return kExitInvalid;
  }
  std::vector<Input> inputs(args.size() - 1);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (const auto code = Load(args[i + 1], limits.reader, &inputs[i], err)) return *code;
    total += inputs[i].array.data.size();  // each is mapped, so the sum fits
  }
  Progress progress(err, "kiln pack", total);
  BlockWriter writer;
  for (const Input& in : inputs) {
    TensorRequest r;
    r.name = in.name;
    r.dtype = in.array.dtype;
    r.shape = in.array.shape;
    const Result<std::uint32_t> added =
        writer.Add(r, SourcePayload(in.array.data, in.array.swap_width, &progress));
    if (!added.ok()) {  // the name, from the command line, breaks a rule
      err << "kiln pack: tensor \"" << base::Escape(in.name) << "\": " << added.error().ToString()
          << "\n";
      return kExitUsage;
    }
  }
  // Reported before the rename: exit 0 if and only if OUT is in place.
  const int code = WriteBlockFile(writer, limits, args[0], "kiln pack", false, err, [&] {
    return ReportBeforeCommit(
        out, err, "kiln pack",
        absl::StrFormat("packed %d tensors into %s\n", inputs.size(), base::Escape(args[0])));
  });
  progress.Finish();
  return code;
}

}  // namespace kiln::cli
