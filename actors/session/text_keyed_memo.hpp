// text_keyed_memo: one value kept with the texts it was made from, so that a caller whose
// inputs did not change since the last call reuses it instead of making it again (a session's
// inbound patch: its messages mostly come by the same route, and building the patch's JSON
// object is a dozen allocations a turn). get() compares the N input texts in place and calls
// `make` only when one differs (or nothing is kept yet); the value it returns is valid until
// the next get(). `make` must depend on nothing but the inputs, or the memo would hand back a
// value the current inputs no longer make. CAF-free; not thread-safe (one owner).
#pragma once
#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace sessionrt::actors {

template <class Value, std::size_t N>
class text_keyed_memo {
 public:
  template <class Make>
  const Value& get(const std::array<std::string_view, N>& inputs, Make&& make) {
    if (!kept_ || !same(inputs)) {
      value_ = make();
      for (std::size_t i = 0; i < N; ++i) inputs_[i].assign(inputs[i]);
      kept_ = true;
      ++made_;
    }
    return value_;
  }
  std::size_t made() const { return made_; }  // how many times `make` ran
  void clear() { kept_ = false; }

 private:
  bool same(const std::array<std::string_view, N>& inputs) const {
    for (std::size_t i = 0; i < N; ++i)
      if (inputs_[i] != inputs[i]) return false;
    return true;
  }

  std::array<std::string, N> inputs_;
  Value value_{};
  bool kept_ = false;
  std::size_t made_ = 0;
};

}  // namespace sessionrt::actors
