// Tensor allocation errors name the real shape (issue 29: an npz error
// printed the shape as "[]").
#include "core/tensor.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <memory>

namespace parity {
namespace {

TEST(TensorCreate, AnAllocationThatFailsNamesTheShapeAndSize) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "ASan aborts on a 2 TiB allocation instead of returning null";
#endif
  auto t = Tensor::Create(DType::kFloat32, {int64_t{1} << 29, 1024});
  ASSERT_FALSE(t) << "2 TiB allocated";
  EXPECT_EQ(t.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(t.error().message(), "cannot allocate a float32 tensor of shape [536870912, 1024] (2199023255552 bytes)");
}

TEST(TensorCopy, OwnsItsBytesApartFromTheBorrowedOnes) {
  auto buffer = std::shared_ptr<std::byte[]>(new std::byte[8]);
  const std::array<float, 2> values{1.5f, -2.0f};
  std::memcpy(buffer.get(), values.data(), sizeof(values));
  Tensor borrowed = Tensor::Borrow(DType::kFloat32, {2}, buffer);
  Tensor copy = borrowed.Copy();
  EXPECT_TRUE(copy.BitwiseEquals(borrowed));
  EXPECT_NE(copy.data(), borrowed.data());
  buffer[0] = std::byte{0xff};
  EXPECT_EQ(copy.view<float>()[0], 1.5f);
  Tensor strings = Tensor::FromStrings({2}, {"a", "b"});
  EXPECT_EQ(strings.Copy().strings(), strings.strings());
}

// A zero dim ends no check: a negative dim after it is still refused (the
// string_tensor fuzz target loaded a STRING tensor of dims [0, -5]).
TEST(ElementCount, RefusesANegativeDimAfterAZero) {
  auto n = ElementCount({0, -5});
  ASSERT_FALSE(n) << "counted " << *n;
  EXPECT_EQ(n.error().message(), "negative dimension -5 in shape [0, -5]");
  EXPECT_EQ(ElementCount({3, 0, 7}).value(), 0);
  EXPECT_EQ(ElementCount({3, 7}).value(), 21);
}

}  // namespace
}  // namespace parity
