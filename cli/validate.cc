#include "absl/strings/str_format.h"
#include "commands.h"
#include "json.h"
#include "mapped_file.h"

namespace kiln::cli {

int RunValidate(const Options& options, std::ostream& out, std::ostream& err) {
  int status = kExitOk;
  if (options.json) out << "[";
  bool first = true;
  for (const std::string& path : options.files) {
    std::string line;
    const MappedFile file(path);
    if (!file.ok()) {
      err << "kiln: " << base::Escape(path) << ": " << file.error() << "\n";
      status = kExitUsage;
      line = absl::StrFormat(R"("ok": false, "io_error": %s)", JsonString(file.error()));
    } else {
      const Result<Directory> r = Parse(file.bytes(), options.parse);
      if (r.ok()) {
        line = R"("ok": true)";
        if (!options.json) out << base::Escape(path) << ": ok\n";
      } else {
        if (status == kExitOk) status = kExitInvalid;
        line = ErrorFields(r.error());
        if (!options.json) out << base::Escape(path) << ": " << r.error().ToString() << "\n";
      }
    }
    if (options.json) {
      out << (first ? "\n  " : ",\n  ") << "{\"file\": " << JsonString(path) << ", " << line << "}";
      first = false;
    }
  }
  if (options.json) out << (first ? "]\n" : "\n]\n");
  return status;
}

}  // namespace kiln::cli
