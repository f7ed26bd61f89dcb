// kiln validate URL and kiln inspect URL: a block on an HTTP(S) server,
// validated with range requests for only the bytes the rules read
// (kiln::RangeValidator, docs/spec.md section 5.2), with libcurl.
//
// What a URL costs and when it is an I/O error (exit 2, never a verdict):
// docs/cli.md, "Remote files". The bounds are in kiln/policy.h (kHttp*).
#ifndef KILN_CLI_REMOTE_FILE_H_
#define KILN_CLI_REMOTE_FILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "commands.h"
#include "kiln/random_access.h"

namespace kiln::cli {

// Whether a FILE argument names a remote file: it starts with "http://" or
// "https://" (the scheme in any case). A local file of such a name is
// reached as ./http://...
[[nodiscard]] bool IsUrl(std::string_view name);

// The status code of an HTTP/1 status line (RFC 9112 section 4: HTTP-version
// SP 3DIGIT SP [reason-phrase], then CR LF), or 0 when the line is not of
// that shape. curl takes "HTTP/1.1  206" (two spaces) and "HTTP/1.1 206x" as
// 206; kiln does not guess what such a server meant (an I/O error naming the
// line).
[[nodiscard]] int HttpStatusCode(std::string_view status_line);

// Whether this kiln was built with libcurl (else every URL is an I/O error).
[[nodiscard]] bool UrlsSupported();

// The outcome of validating a remote block.
struct RemoteCheck {
  // Nonempty: no verdict (unreachable, misbehaving or changing server, a
  // bound of kiln/policy.h reached). Untrusted text in it is escaped.
  std::string io_error;
  // When io_error is empty: settled, kComplete or kRejected.
  std::optional<RangeValidator> validator;
  std::uint64_t size = 0;  // the file's size, as the server gave it
};

// Validates the block at `url` with options.parse (mode, limits) and
// options.idle_timeout_seconds.
[[nodiscard]] RemoteCheck CheckRemote(const std::string& url, const Options& options);

// kiln validate's verdict on `url` (CheckRemote).
[[nodiscard]] StreamOutcome ValidateUrl(const std::string& url, const Options& options);

}  // namespace kiln::cli

#endif  // KILN_CLI_REMOTE_FILE_H_
