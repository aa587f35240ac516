#include "moetwin/common/replay_allocator.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <memory>

namespace moetwin {
namespace {

#if defined(__GLIBC__)
// 16 MiB: above glibc's default mmap threshold (128 KiB, dynamic up to 32 MiB), below the fixed one.
constexpr std::size_t kBlock = 16u * 1024 * 1024;

TEST(ReplayAllocator, LargeBlocksComeFromTheHeapAndStayThereWhenFreed) {
  if (!kGlibcMallocInUse)
    GTEST_SKIP() << "malloc is the sanitizer's, not glibc's: the setting does not apply";
  ASSERT_TRUE(keep_freed_memory_for_reuse());
  const struct mallinfo2 before = mallinfo2();
  auto block = std::make_unique<char[]>(kBlock);
  // Written and read through a volatile so that the compiler cannot elide the allocation.
  volatile char fill = 1;
  std::memset(block.get(), fill, kBlock);
  const volatile char last = block[kBlock - 1];
  EXPECT_EQ(last, 1);
  const struct mallinfo2 held = mallinfo2();
  // Not a separate mapping: the mapped bytes did not grow by the block.
  EXPECT_LT(held.hblkhd, before.hblkhd + kBlock);
  block.reset();
  const struct mallinfo2 after = mallinfo2();
  // Freed, not trimmed: the heap keeps the block's pages for the next allocation of that size.
  EXPECT_GE(after.arena, held.arena);
  EXPECT_GE(after.fordblks, kBlock);
}
#endif

// Wherever malloc is not glibc's (a sanitizer's allocator, another libc) the call says it did nothing.
TEST(ReplayAllocator, SaysFalseWhereMallocIsNotGlibcs) {
  if (kGlibcMallocInUse) GTEST_SKIP() << "glibc's malloc: covered by the test above";
  EXPECT_FALSE(keep_freed_memory_for_reuse());
}

}  // namespace
}  // namespace moetwin
