#pragma once
// Whether this translation unit is built under a sanitizer that changes time and memory use a lot: code
// with time or memory limits (the database reader's child, tests with time bounds) relaxes them there.
// GCC defines __SANITIZE_ADDRESS__; Clang answers __has_feature(...).

namespace moetwin {

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

#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
inline constexpr bool kMemorySanitizer = true;
#else
inline constexpr bool kMemorySanitizer = false;
#endif
#else
inline constexpr bool kMemorySanitizer = false;
#endif

}  // namespace moetwin
