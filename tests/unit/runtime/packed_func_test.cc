#include "runtime_test_util.h"
#include "loom/runtime/ndarray.h"
#include "loom/runtime/packed_func.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "loom/support/error.h"

namespace loom::runtime {
namespace {

TEST(PackedFunc, PacksEveryArgumentKind) {
  std::vector<int32_t> codes;
  PackedFunc record([&](PackedArgs args, RetValue* ret) {
    codes.assign(args.type_codes(), args.type_codes() + args.size());
    EXPECT_EQ(args[0].AsInt(), -3);
    EXPECT_TRUE(args[1].AsBool());
    EXPECT_DOUBLE_EQ(args[2].AsFloat(), 2.5);
    EXPECT_EQ(args[3].AsString(), "text");
    EXPECT_EQ(args[4].AsString(), "literal");
    EXPECT_EQ(args[5].AsDataType(), DataType::Int(8, 4));
    EXPECT_EQ(args[6].AsDevice().device_type, kDLCPU);
    EXPECT_EQ(args[7].AsDLTensor()->shape[0], 3);
    EXPECT_EQ(args[8].AsDLTensor()->shape[0], 3);
    EXPECT_EQ(args[9].AsHandle(), nullptr);
    EXPECT_NE(args[10].AsHandle(), nullptr);
    EXPECT_EQ(args[11].AsDataType(), DataType::Float(16));
    ret->SetInt(args.size());
  });
  NDArray array = NDArray::Empty({3}, DataType::Float(32));
  std::string text = "text";
  int local = 0;
  RetValue ret = record(int64_t{-3}, true, 2.5f, text, "literal", DataType::Int(8, 4),
                        kHostDevice, array, array.tensor(), nullptr, &local, "float16");
  EXPECT_EQ(ret.AsInt(), 12);
  EXPECT_EQ(codes, (std::vector<int32_t>{kLoomArgInt, kLoomArgInt, kLoomArgFloat, kLoomStr,
                                         kLoomStr, kLoomDataType, kLoomDevice,
                                         kLoomDLTensorHandle, kLoomDLTensorHandle, kLoomNullptr,
                                         kLoomOpaqueHandle, kLoomStr}));
}

TEST(PackedFunc, CallWithArraysPassesEachArraysTensor) {
  std::vector<NDArray> arrays = {NDArray::Empty({2}, DataType::Float(32)),
                                 NDArray::Empty({3, 4}, DataType::Int(8))};
  std::vector<DLTensor*> seen;
  PackedFunc record([&](PackedArgs args, RetValue* ret) {
    for (int i = 0; i < args.size(); ++i) seen.push_back(args[i].AsDLTensor());
    ret->SetInt(args.size());
  });
  EXPECT_EQ(record.CallWithArrays(arrays).AsInt(), 2);
  EXPECT_EQ(seen, (std::vector<DLTensor*>{arrays[0].tensor(), arrays[1].tensor()}));
}

TEST(PackedFunc, TypeMismatchesNameTheArgumentAndBothTypes) {
  PackedFunc as_int([](PackedArgs args, RetValue*) { args[1].AsInt(); });
  EXPECT_EQ(ErrorOf([&] { as_int(1, "seven"); }),
            "packed function argument #1: expected int but got str");
  PackedFunc as_tensor([](PackedArgs args, RetValue*) { args[0].AsDLTensor(); });
  EXPECT_EQ(ErrorOf([&] { as_tensor(1.5); }),
            "packed function argument #0: expected DLTensor* but got float");
  EXPECT_EQ(ErrorOf([&] { as_tensor(static_cast<DLTensor*>(nullptr)); }),
            "packed function argument #0: expected DLTensor* but got DLTensor*");
  PackedFunc as_device([](PackedArgs args, RetValue*) { args[0].AsDevice(); });
  EXPECT_EQ(ErrorOf([&] { as_device(DataType::Int(32)); }),
            "packed function argument #0: expected DLDevice but got DataType");
  PackedFunc as_string([](PackedArgs args, RetValue*) { args[0].AsString(); });
  EXPECT_EQ(ErrorOf([&] { as_string(kHostDevice); }),
            "packed function argument #0: expected str but got DLDevice");
}

TEST(PackedFunc, MissingArgumentIsAnError) {
  PackedFunc third([](PackedArgs args, RetValue*) { args[2].AsInt(); });
  EXPECT_EQ(ErrorOf([&] { third(1); }),
            "packed function: argument #2 was requested but the call passed 1 argument");
}

TEST(PackedFunc, EmptyFunctionCallIsAnError) {
  PackedFunc empty;
  EXPECT_FALSE(empty.defined());
  EXPECT_NE(ErrorOf([&] { empty(); }).find("called an empty PackedFunc"), std::string::npos);
}

TEST(RetValue, OwnsStringsAndArraysAcrossCopies) {
  PackedFunc make_string([](PackedArgs, RetValue* ret) { ret->SetString(std::string(100, 'x')); });
  RetValue first = make_string();
  RetValue copy = first;
  first.SetInt(1);
  EXPECT_EQ(copy.AsString(), std::string(100, 'x'));
  EXPECT_EQ(std::string(copy.value().v_str), std::string(100, 'x'));
  RetValue moved = std::move(copy);
  EXPECT_EQ(std::string(moved.value().v_str), std::string(100, 'x'));

  RetValue array_ret;
  array_ret.SetNDArray(NDArray::Empty({2}, DataType::Int(32)));
  EXPECT_EQ(array_ret.AsNDArray()->shape[0], 2);
  EXPECT_EQ(array_ret.AsDLTensor(), array_ret.AsNDArray().tensor());
  RetValue number;
  number.SetFloat(0.25);
  EXPECT_EQ(ErrorOf([&] { number.AsNDArray(); }),
            "packed function return value: expected an NDArray but got float");
  EXPECT_EQ(ErrorOf([&] { number.AsInt(); }),
            "packed function return value: expected int but got float");
  EXPECT_TRUE(RetValue().is_none());
}

int32_t CountArgs(const LoomValue*, const int32_t*, int32_t num_args, LoomValue* ret,
                  int32_t* ret_code, void*) {
  if (num_args > 2) {
    LoomAPISetLastError("count_args: at most 2 arguments");
    return -1;
  }
  ret->v_int64 = num_args;
  *ret_code = kLoomArgInt;
  return 0;
}

int32_t FailSilently(const LoomValue*, const int32_t*, int32_t, LoomValue*, int32_t*, void*) {
  return 7;
}

TEST(WrapPackedCFunc, CallsThroughAndTurnsFailuresIntoErrors) {
  auto owner = std::make_shared<int>(5);
  std::weak_ptr<int> watch = owner;
  PackedFunc count = WrapPackedCFunc(CountArgs, owner);
  owner.reset();
  EXPECT_EQ(count(1, 2).AsInt(), 2);
  EXPECT_EQ(ErrorOf([&] { count(1, 2, 3); }), "count_args: at most 2 arguments");
  EXPECT_FALSE(watch.expired()) << "the PackedFunc must keep its owner alive";
  count = PackedFunc();
  EXPECT_TRUE(watch.expired());

  PackedFunc silent = WrapPackedCFunc(FailSilently, nullptr);
  EXPECT_EQ(ErrorOf([&] { silent(); }),
            "the function failed with status 7 without recording a message");
}

TEST(Registry, RegistersLooksUpOverridesAndRemoves) {
  PackedFunc one([](PackedArgs, RetValue* ret) { ret->SetInt(1); });
  PackedFunc two([](PackedArgs, RetValue* ret) { ret->SetInt(2); });
  Registry::Register("test.registry.b", one);
  Registry::Register("test.registry.a", one);
  ASSERT_TRUE(Registry::Get("test.registry.b").has_value());
  EXPECT_EQ((*Registry::Get("test.registry.b"))().AsInt(), 1);
  EXPECT_FALSE(Registry::Get("test.registry.missing").has_value());

  EXPECT_EQ(ErrorOf([&] { Registry::Register("test.registry.b", two); }),
            "Registry::Register('test.registry.b'): a function is already registered under "
            "this name; pass override=true to replace it");
  Registry::Register("test.registry.b", two, /*override=*/true);
  EXPECT_EQ((*Registry::Get("test.registry.b"))().AsInt(), 2);
  EXPECT_EQ(ErrorOf([&] { Registry::Register("test.registry.c", PackedFunc()); }),
            "Registry::Register('test.registry.c'): the function is empty");

  std::vector<std::string> names = Registry::ListNames();
  auto a = std::find(names.begin(), names.end(), "test.registry.a");
  auto b = std::find(names.begin(), names.end(), "test.registry.b");
  ASSERT_NE(a, names.end());
  EXPECT_EQ(b, a + 1) << "names are sorted";

  EXPECT_TRUE(Registry::Remove("test.registry.a"));
  EXPECT_TRUE(Registry::Remove("test.registry.b"));
  EXPECT_FALSE(Registry::Remove("test.registry.a"));
  EXPECT_FALSE(Registry::Get("test.registry.a").has_value());
}

}  // namespace
}  // namespace loom::runtime
