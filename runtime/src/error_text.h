#pragma once
// Fixed-buffer text builder for load errors: no heap, no printf.

#include <stddef.h>
#include <stdint.h>

#include "baton/plan_view.h"

namespace baton::internal {

class TextBuilder {
 public:
  TextBuilder(char* buffer, size_t capacity) : buffer_(buffer), capacity_(capacity) {
    if (capacity_ > 0) buffer_[0] = '\0';
  }
  TextBuilder& Add(const char* s) {
    while (s && *s) Put(*s++);
    return *this;
  }
  TextBuilder& Add(uint32_t v) {
    char digits[10];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (n > 0) Put(digits[--n]);
    return *this;
  }

 private:
  void Put(char c) {
    if (length_ + 1 < capacity_) {
      buffer_[length_++] = c;
      buffer_[length_] = '\0';
    }
  }
  char* buffer_;
  size_t capacity_;
  size_t length_ = 0;
};

// The string at `index` of `list`: strings stored one after another, each
// ending in its NUL ("a\0b\0c": index 1 is "b"). `list` holds more than
// `index` strings.
const char* NthString(const char* list, uint32_t index);

// Writes "<what><index> '<name>': <message>" into `out` (nothing when `out`
// is null; without `what` just the message, without `name` no quotes).
void Describe(LoadError* out, const char* what, uint32_t index, const char* name,
              const char* message);

}  // namespace baton::internal
