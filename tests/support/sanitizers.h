// Whether this test binary (and the kiln built with it, by the same preset)
// runs under AddressSanitizer, whose runtime needs address space and
// descriptors of its own: a test of a resource limit states what it can
// check there.
#ifndef KILN_TESTS_SUPPORT_SANITIZERS_H_
#define KILN_TESTS_SUPPORT_SANITIZERS_H_

namespace kiln::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace kiln::testing

#endif  // KILN_TESTS_SUPPORT_SANITIZERS_H_
