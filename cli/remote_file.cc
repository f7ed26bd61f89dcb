#include "remote_file.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <span>
#include <utility>

#include "absl/strings/str_format.h"
#include "kiln/base/escape.h"
#include "kiln/policy.h"

#ifdef KILN_HAVE_CURL
#include <curl/curl.h>
#endif

namespace kiln::cli {

bool IsUrl(std::string_view name) {
  const auto starts = [name](std::string_view scheme) {
    if (name.size() < scheme.size()) return false;
    for (std::size_t i = 0; i < scheme.size(); ++i) {
      const char c = name[i];
      const char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
      if (lower != scheme[i]) return false;
    }
    return true;
  };
  return starts("http://") || starts("https://");
}

StreamOutcome ValidateUrl(const std::string& url, const Options& options) {
  RemoteCheck c = CheckRemote(url, options);
  StreamOutcome verdict;
  if (!c.io_error.empty()) {
    verdict.io_error = std::move(c.io_error);
  } else if (c.validator->status() == RangeStatus::kRejected) {
    verdict.error = c.validator->error();
  }
  return verdict;
}

int HttpStatusCode(std::string_view line) {
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r' ||
                           line.back() == '\n')) {
    line.remove_suffix(1);
  }
  const std::size_t space = line.find(' ');
  if (space == std::string_view::npos || line.size() < space + 4) return 0;
  if (line.size() > space + 4 && line[space + 4] != ' ') return 0;
  int code = 0;
  for (const char c : line.substr(space + 1, 3)) {
    if (c < '0' || c > '9') return 0;
    code = code * 10 + (c - '0');
  }
  return code;
}

#ifndef KILN_HAVE_CURL

bool UrlsSupported() { return false; }

RemoteCheck CheckRemote(const std::string&, const Options&) {
  RemoteCheck c;
  c.io_error = "URLs are not supported: this kiln was built without libcurl";
  return c;
}

#else                                // KILN_HAVE_CURL

bool UrlsSupported() { return true; }

namespace {

// At most this many bytes of a server's text (a header, curl's message,
// which may quote the URL) are shown, escaped (base::Escape).
constexpr std::size_t kShownBytes = 160;

std::string Shown(std::string_view text) { return base::Escape(text, kShownBytes); }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  });
  return out;
}

// A decimal u64 with nothing around it (leading zeros allowed: RFC 9110's
// 1*DIGIT; a value past 2^64-1 is out of range, not wrapped).
std::optional<std::uint64_t> ParseU64(std::string_view s) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// "bytes FIRST-LAST/TOTAL" (RFC 9110 section 14.4), TOTAL a number.
struct ContentRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::uint64_t total = 0;
};

std::optional<ContentRange> ParseContentRange(std::string_view v) {
  if (v.size() < 6 || Lower(v.substr(0, 6)) != "bytes ") return std::nullopt;
  v = Trim(v.substr(6));
  const std::size_t dash = v.find('-');
  const std::size_t slash = v.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash) {
    return std::nullopt;
  }
  const auto first = ParseU64(v.substr(0, dash));
  const auto last = ParseU64(v.substr(dash + 1, slash - dash - 1));
  const auto total = ParseU64(v.substr(slash + 1));
  if (!first || !last || !total) return std::nullopt;
  return ContentRange{*first, *last, *total};
}

// The headers of one reply (the last one, after redirects and 1xx replies).
struct Reply {
  int status = 0;           // 0: the status line had no status code (HttpStatusCode)
  std::string status_line;  // as received (what Shown() shows of it)
  std::optional<std::string> content_range;
  std::optional<std::string> content_length;
  std::optional<std::string> content_encoding;
  std::optional<std::string> etag;
  std::optional<std::string> last_modified;
  std::string conflict;  // a header given twice with different values
};

// "HTTP 404", or the status line when it has no status code.
std::string Answer(const Reply& r) {
  if (r.status != 0) return absl::StrFormat("HTTP %d", r.status);
  return "a status line without a status code (" + Shown(r.status_line) + ")";
}

void CurlInitOnce() {
  static const bool done = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  (void)done;
}

// One server conversation: GETs of single byte ranges (the first one gives
// the size), on one
// curl handle (the connection is kept alive between them).
class Http {
 public:
  Http(const std::string& url, std::uint64_t idle_timeout_seconds)
      : url_(url), idle_(std::min(idle_timeout_seconds, kMaxIdleTimeoutSeconds)) {}
  ~Http() {
    if (curl_ != nullptr) curl_easy_cleanup(curl_);
    if (headers_ != nullptr) curl_slist_free_all(headers_);
  }
  Http(const Http&) = delete;
  Http& operator=(const Http&) = delete;

  // GET bytes=0-63: learns the size (the Content-Range total) and the
  // validators (ETag, Last-Modified), and keeps those first bytes (first()).
  bool Open(std::string* why);
  // Reads exactly r into out (out.size() == r.length).
  bool Get(ByteRange r, std::span<std::uint8_t> out, std::string* why);

  [[nodiscard]] std::uint64_t size() const { return size_; }
  // The first bytes of the file: min(size, 64).
  [[nodiscard]] std::span<const std::uint8_t> first() const {
    return std::span<const std::uint8_t>(first_).first(first_length_);
  }

 private:
  bool Setup(std::string* why);
  bool Perform(std::string* why);
  bool CheckFirst(std::string* why);
  bool CheckPart(std::string* why) const;
  bool CheckValidators(std::string* why) const;

  static std::size_t OnHeader(char* data, std::size_t size, std::size_t n, void* self);
  static std::size_t OnBody(char* data, std::size_t size, std::size_t n, void* self);

  std::string url_;  // after the first request: where its redirects ended
  std::uint64_t idle_;
  CURL* curl_ = nullptr;
  curl_slist* headers_ = nullptr;
  char curl_error_[CURL_ERROR_SIZE] = {};
  std::uint64_t requests_ = 0;

  // The file, from the first reply.
  static constexpr std::uint64_t kFirstBytes = 64;  // the header
  std::array<std::uint8_t, kFirstBytes> first_{};
  std::size_t first_length_ = 0;
  std::uint64_t size_ = 0;
  std::string etag_;
  std::string last_modified_;

  // The request in flight.
  Reply reply_;
  bool opening_ = false;  // the first request (Open)
  bool discard_ = false;  // the body is not the file's (an empty file's 416 page)
  std::uint64_t discarded_ = 0;
  ByteRange want_;
  std::span<std::uint8_t> out_;
  std::uint64_t got_ = 0;
  bool checked_ = false;  // the reply's headers were checked (at its first body byte)
  std::string fail_;      // why a callback stopped the transfer
};

std::size_t Http::OnHeader(char* data, std::size_t size, std::size_t n, void* self_ptr) {
  Http& self = *static_cast<Http*>(self_ptr);
  const std::size_t bytes = size * n;  // curl: size is always 1
  const std::string_view line(data, bytes);
  if (line.size() >= 5 && line.substr(0, 5) == "HTTP/") {
    self.reply_ = Reply{};  // a new reply (after a redirect or a 1xx)
    self.reply_.status = HttpStatusCode(line);
    // Whole (curl bounds a header line at 100 KiB): Shown() then sees every
    // character it may show whole and marks the cut.
    self.reply_.status_line = Trim(line);
    return bytes;
  }
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return bytes;
  const std::string name = Lower(Trim(line.substr(0, colon)));
  const std::string value(Trim(line.substr(colon + 1)));
  std::optional<std::string>* slot = nullptr;
  if (name == "content-range") slot = &self.reply_.content_range;
  if (name == "content-length") slot = &self.reply_.content_length;
  if (name == "content-encoding") slot = &self.reply_.content_encoding;
  if (name == "etag") slot = &self.reply_.etag;
  if (name == "last-modified") slot = &self.reply_.last_modified;
  if (slot == nullptr) return bytes;
  if (slot->has_value() && **slot != value && self.reply_.conflict.empty()) {
    self.reply_.conflict = name;
  }
  if (!slot->has_value()) *slot = value;
  return bytes;
}

std::size_t Http::OnBody(char* data, std::size_t size, std::size_t n, void* self_ptr) {
  Http& self = *static_cast<Http*>(self_ptr);
  const std::size_t bytes = size * n;
  if (!self.checked_) {
    const bool ok = self.opening_ ? self.CheckFirst(&self.fail_) : self.CheckPart(&self.fail_);
    if (!ok) return bytes == 0 ? 1 : 0;  // stops the transfer (a count other than `bytes`)
    self.checked_ = true;
  }
  if (self.discard_) {
    self.discarded_ += bytes;
    if (self.discarded_ <= kHttpMaxDiscardedBytes) return bytes;
    self.fail_ = "the server's error page goes on past 64 KiB";
    return bytes == 0 ? 1 : 0;
  }
  if (bytes > self.want_.length - self.got_) {
    self.fail_ = absl::StrFormat(
        "the server sent more bytes than asked for bytes %d-%d (%d bytes asked)", self.want_.offset,
        self.want_.offset + self.want_.length - 1, self.want_.length);
    return bytes == 0 ? 1 : 0;
  }
  std::memcpy(self.out_.data() + self.got_, data, bytes);
  self.got_ += bytes;
  return bytes;
}

bool Http::Setup(std::string* why) {
  CurlInitOnce();
  curl_ = curl_easy_init();
  if (curl_ == nullptr) {
    *why = "cannot start an HTTP client (curl_easy_init failed)";
    return false;
  }
  headers_ = curl_slist_append(nullptr, "Accept-Encoding: identity");
  if (headers_ == nullptr) {
    *why = "out of memory";
    return false;
  }
  const long connect = static_cast<long>(idle_ == 0 ? kHttpConnectTimeoutSeconds
                                                    : std::min(idle_, kHttpConnectTimeoutSeconds));
  bool ok = true;
  const auto set = [&](CURLoption o, auto v) {
    ok = ok && curl_easy_setopt(curl_, o, v) == CURLE_OK;
  };
  set(CURLOPT_ERRORBUFFER, curl_error_);
  set(CURLOPT_NOSIGNAL, 1L);
  set(CURLOPT_NOPROGRESS, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500  // 7.85
  set(CURLOPT_PROTOCOLS_STR, "http,https");
  set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
  set(CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
  set(CURLOPT_REDIR_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  set(CURLOPT_FOLLOWLOCATION, 1L);
  set(CURLOPT_MAXREDIRS, static_cast<long>(kHttpMaxRedirects));
  set(CURLOPT_SSL_VERIFYPEER, 1L);
  set(CURLOPT_SSL_VERIFYHOST, 2L);
  set(CURLOPT_CONNECTTIMEOUT, connect);
  if (idle_ != 0) {
    set(CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(kHttpMinBytesPerSecond));
    set(CURLOPT_LOW_SPEED_TIME, static_cast<long>(idle_));
  }
  set(CURLOPT_HTTP_CONTENT_DECODING, 0L);
  set(CURLOPT_HTTPHEADER, headers_);
  set(CURLOPT_USERAGENT, "kiln");
  set(CURLOPT_HEADERFUNCTION, &Http::OnHeader);
  set(CURLOPT_HEADERDATA, this);
  set(CURLOPT_WRITEFUNCTION, &Http::OnBody);
  set(CURLOPT_WRITEDATA, this);
  if (!ok) *why = "cannot set up the HTTP client (a curl option was refused)";
  return ok;
}

bool Http::Perform(std::string* why) {
  if (requests_ >= kHttpMaxRequests) {
    *why = absl::StrFormat("more than %d HTTP requests needed (the bound of kiln/policy.h)",
                           kHttpMaxRequests);
    return false;
  }
  ++requests_;
  reply_ = Reply{};
  got_ = 0;
  discarded_ = 0;
  checked_ = false;
  fail_.clear();
  curl_error_[0] = '\0';
  const CURLcode rc = curl_easy_perform(curl_);
  // The write and header callbacks set fail_ during curl_easy_perform.
  // cppcheck-suppress knownConditionTrueFalse
  if (!fail_.empty()) {
    *why = fail_;
    return false;
  }
  if (rc == CURLE_OK) return true;
  const std::string detail = curl_error_[0] != '\0' ? curl_error_ : curl_easy_strerror(rc);
  switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
      if (detail.rfind("Operation too slow", 0) == 0) {
        *why = absl::StrFormat("the server sent under %d bytes/s for %d s (--idle-timeout)",
                               kHttpMinBytesPerSecond, idle_);
      } else {
        *why = absl::StrFormat(
            "timed out (connect timeout %d s): %s",
            idle_ == 0 ? kHttpConnectTimeoutSeconds : std::min(idle_, kHttpConnectTimeoutSeconds),
            Shown(detail));
      }
      break;
    case CURLE_TOO_MANY_REDIRECTS:
      *why = absl::StrFormat("more than %d redirects: %s", kHttpMaxRedirects, Shown(detail));
      break;
    case CURLE_UNSUPPORTED_PROTOCOL:
      *why = "refused: only http:// and https:// are followed: " + Shown(detail);
      break;
    default:
      *why = "HTTP request failed: " + Shown(detail);
      break;
  }
  return false;
}

// A validator that changed is a new version of the file: no verdict may mix
// bytes of two versions.
bool Http::CheckValidators(std::string* why) const {
  if (reply_.etag && !etag_.empty() && *reply_.etag != etag_) {
    *why = absl::StrFormat("the file changed on the server (ETag %s, then %s)", Shown(etag_),
                           Shown(*reply_.etag));
    return false;
  }
  if (reply_.last_modified && !last_modified_.empty() && *reply_.last_modified != last_modified_) {
    *why = absl::StrFormat("the file changed on the server (Last-Modified %s, then %s)",
                           Shown(last_modified_), Shown(*reply_.last_modified));
    return false;
  }
  if ((reply_.etag && etag_.empty()) || (reply_.last_modified && last_modified_.empty())) {
    *why = "the file changed on the server (a validator appeared that the first reply lacked)";
    return false;
  }
  return true;
}

// The headers of a reply to GET with Range: bytes=FIRST-LAST.
bool Http::CheckPart(std::string* why) const {
  const std::uint64_t asked_first = want_.offset;
  const std::uint64_t asked_last = want_.offset + want_.length - 1;
  if (!reply_.conflict.empty()) {
    *why = "the server sent two different " + reply_.conflict + " headers";
    return false;
  }
  if (!CheckValidators(why)) return false;
  if (reply_.content_encoding && Lower(*reply_.content_encoding) != "identity") {
    *why = "the server encoded the reply (Content-Encoding: " + Shown(*reply_.content_encoding) +
           "); kiln asks for the bytes as stored";
    return false;
  }
  if (reply_.status == 200) {
    // Range ignored. Only a reply that is the whole file and was asked for
    // whole is the asked range.
    const auto length = reply_.content_length ? ParseU64(*reply_.content_length) : std::nullopt;
    if (asked_first == 0 && want_.length == size_ && length && *length == size_) return true;
    *why = absl::StrFormat("the server ignored the range request for bytes %d-%d (HTTP 200)",
                           asked_first, asked_last);
    return false;
  }
  if (reply_.status != 206) {
    *why = absl::StrFormat("the server answered %s to a request for bytes %d-%d", Answer(reply_),
                           asked_first, asked_last);
    return false;
  }
  if (!reply_.content_range) {
    *why = "the server's partial reply has no Content-Range";
    return false;
  }
  const auto cr = ParseContentRange(*reply_.content_range);
  if (!cr || cr->first != asked_first || cr->last != asked_last || cr->total != size_) {
    *why = absl::StrFormat(
        "the server sent Content-Range: %s for bytes %d-%d/%d (the size it gave first)",
        Shown(*reply_.content_range), asked_first, asked_last, size_);
    return false;
  }
  if (reply_.content_length) {
    const auto length = ParseU64(*reply_.content_length);
    if (!length || *length != want_.length) {
      *why = absl::StrFormat("the server announced Content-Length %s for %d bytes asked",
                             Shown(*reply_.content_length), want_.length);
      return false;
    }
  }
  return true;
}

// The reply to the first request, GET bytes=0-63: it gives the file's size
// (the Content-Range total) and its validators, and holds the header.
bool Http::CheckFirst(std::string* why) {
  if (!reply_.conflict.empty()) {
    *why = "the server sent two different " + reply_.conflict + " headers";
    return false;
  }
  if (reply_.content_encoding && Lower(*reply_.content_encoding) != "identity") {
    *why = "the server encoded the reply (Content-Encoding: " + Shown(*reply_.content_encoding) +
           "); kiln asks for the bytes as stored";
    return false;
  }
  etag_ = reply_.etag.value_or("");
  last_modified_ = reply_.last_modified.value_or("");
  // The announced length, or a value above every range asked for.
  const std::uint64_t length =
      ParseU64(reply_.content_length.value_or("")).value_or(kFirstBytes + 1);
  if (reply_.status == 206) {
    const auto cr = reply_.content_range ? ParseContentRange(*reply_.content_range) : std::nullopt;
    if (!cr || cr->first != 0 || cr->total == 0 ||
        cr->last != std::min(cr->total, kFirstBytes) - 1) {
      *why = absl::StrFormat("the server sent Content-Range: %s for bytes 0-%d",
                             Shown(reply_.content_range.value_or("(none)")), kFirstBytes - 1);
      return false;
    }
    size_ = cr->total;
    want_.length = cr->last + 1;
    if (reply_.content_length && length != want_.length) {
      *why = absl::StrFormat("the server announced Content-Length %s for %d bytes asked",
                             Shown(*reply_.content_length), want_.length);
      return false;
    }
    return true;
  }
  if (reply_.status == 200 && length <= kFirstBytes) {
    size_ = length;  // the whole file is shorter than the range asked for
    want_.length = length;
    return true;
  }
  if (reply_.status == 200) {
    *why = absl::StrFormat("the server ignored the range request for bytes 0-%d (HTTP 200)",
                           kFirstBytes - 1);
    return false;
  }
  if (reply_.status == 416 && reply_.content_range && *reply_.content_range == "bytes */0") {
    size_ = 0;  // an empty file: no byte 0 (its 416 page is not read)
    want_.length = 0;
    discard_ = true;
    return true;
  }
  *why = absl::StrFormat("the server answered %s to a request for bytes 0-%d", Answer(reply_),
                         kFirstBytes - 1);
  return false;
}

bool Http::Open(std::string* why) {
  if (!Setup(why)) return false;
  if (curl_easy_setopt(curl_, CURLOPT_URL, url_.c_str()) != CURLE_OK ||
      curl_easy_setopt(curl_, CURLOPT_HTTPGET, 1L) != CURLE_OK ||
      curl_easy_setopt(curl_, CURLOPT_RANGE, "0-63") != CURLE_OK) {
    *why = "the URL was refused by the HTTP client";
    return false;
  }
  opening_ = true;
  want_ = ByteRange{0, kFirstBytes};
  out_ = first_;
  if (!Perform(why)) return false;
  if (!checked_ && !CheckFirst(why)) return false;  // no body came: check the headers now
  opening_ = false;
  discard_ = false;
  if (got_ != want_.length) {
    *why = absl::StrFormat("the server sent %d of the %d bytes asked for bytes 0-%d", got_,
                           want_.length, want_.length - 1);
    return false;
  }
  first_length_ = static_cast<std::size_t>(want_.length);
  // Later requests go where the redirects ended, without redirecting again
  // on the way (each one is still bounded, and only http/https).
  const char* effective = nullptr;
  if (curl_easy_getinfo(curl_, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK &&
      effective != nullptr) {
    url_ = effective;
  }
  // If-Range: a strong ETag, else the date (RFC 9110 section 13.1.5).
  std::string if_range;
  if (!etag_.empty() && etag_.rfind("W/", 0) != 0) {
    if_range = etag_;
  } else if (!last_modified_.empty()) {
    if_range = last_modified_;
  }
  if (!if_range.empty()) {
    curl_slist* more = curl_slist_append(headers_, ("If-Range: " + if_range).c_str());
    if (more == nullptr) {
      *why = "out of memory";
      return false;
    }
    headers_ = more;
  }
  if (curl_easy_setopt(curl_, CURLOPT_URL, url_.c_str()) != CURLE_OK ||
      curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers_) != CURLE_OK) {
    *why = "the URL was refused by the HTTP client";
    return false;
  }
  return true;
}

bool Http::Get(ByteRange r, std::span<std::uint8_t> out, std::string* why) {
  want_ = r;
  out_ = out;
  const std::string range = absl::StrFormat("%d-%d", r.offset, r.offset + r.length - 1);
  if (curl_easy_setopt(curl_, CURLOPT_RANGE, range.c_str()) != CURLE_OK) {
    *why = "the range was refused by the HTTP client";
    return false;
  }
  if (!Perform(why)) return false;
  if (!checked_ && !CheckPart(why)) return false;  // no body came: check the headers now
  if (got_ != r.length) {
    *why = absl::StrFormat("the server sent %d of the %d bytes asked for bytes %d-%d", got_,
                           r.length, r.offset, r.offset + r.length - 1);
    return false;
  }
  return true;
}

}  // namespace

RemoteCheck CheckRemote(const std::string& url, const Options& options) {
  RemoteCheck c;
  Http http(url, options.idle_timeout_seconds);
  std::string why;
  if (!http.Open(&why)) {
    c.io_error = std::move(why);
    return c;
  }
  c.size = http.size();
  RangeValidator v(c.size, {.mode = options.parse.mode, .limits = options.parse.limits});
  while (const std::optional<ByteRange> want = v.NextRange()) {
    if (want->offset == 0 && want->length == http.first().size()) {
      (void)v.Provide(http.first());  // the header, read by Open
      continue;
    }
    if (!http.Get(*want, v.Buffer(), &why)) {
      c.io_error = std::move(why);
      return c;
    }
    (void)v.Filled();
  }
  if (v.status() == RangeStatus::kReadFailed) {
    c.io_error = v.read_error();
    return c;
  }
  c.validator.emplace(std::move(v));
  return c;
}

#endif  // KILN_HAVE_CURL

}  // namespace kiln::cli
