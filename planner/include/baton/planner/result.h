#pragma once
// Planner error handling: Result<T> carries a value or an error whose message
// names the file, node, tensor or field at fault. Host only; may allocate.

#include <optional>
#include <string>
#include <utility>

namespace baton::planner {

struct Error {
  std::string message;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT
  Result(Error error) : error_(std::move(error.message)) {}  // NOLINT

  bool ok() const { return value_.has_value(); }
  const std::string& error() const { return error_; }
  T& value() & { return *value_; }
  T&& value() && { return std::move(*value_); }
  const T& value() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }

 private:
  std::optional<T> value_;
  std::string error_;
};

// For functions that return nothing but can fail.
class [[nodiscard]] Check {
 public:
  Check() = default;
  Check(Error error) : error_(std::move(error.message)), ok_(false) {}  // NOLINT
  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }

 private:
  std::string error_;
  bool ok_ = true;
};

inline Error Fail(std::string message) { return Error{std::move(message)}; }

}  // namespace baton::planner

#define BATON_TRY(expr)                                     \
  do {                                                      \
    auto baton_check_ = (expr);                             \
    if (!baton_check_.ok()) return ::baton::planner::Fail(baton_check_.error()); \
  } while (0)

#define BATON_CONCAT_INNER(a, b) a##b
#define BATON_CONCAT(a, b) BATON_CONCAT_INNER(a, b)
#define BATON_ASSIGN_OR_RETURN(lhs, expr)                                   \
  auto BATON_CONCAT(baton_result_, __LINE__) = (expr);                      \
  if (!BATON_CONCAT(baton_result_, __LINE__).ok())                          \
    return ::baton::planner::Fail(BATON_CONCAT(baton_result_, __LINE__).error()); \
  lhs = std::move(BATON_CONCAT(baton_result_, __LINE__)).value()
