// Megatron-Core's pipeline layout string, expanded (pipeline_layout_string.hpp).
#include "moetwin/scenario/pipeline_layout_string.hpp"

#include <cctype>
#include <cstddef>

#include "moetwin/common/concat.hpp"

namespace moetwin {
namespace {

constexpr long long kMaxRepeat = 100000;
// Bound on the expanded text: a real layout has a few hundred symbols (layers plus separators); the bound
// keeps a hostile "((t*100000)*100000)" from allocating gigabytes.
constexpr std::size_t kMaxExpanded = 1000000;
constexpr int kMaxDepth = 16;

class Expander {
 public:
  Expander(const std::string& text, const InputLocation& where, const std::string& key)
      : text_(text), where_(where), key_(key) {}

  std::string run() {
    std::string out = sequence(0);
    if (pos_ < text_.size())
      fail(concat({"a ')' only after a '(' (position ", std::to_string(pos_ + 1), ")"}));
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& expected) const {
    throw InputError(
        where_, key_, concat({"\"", text_, "\""}),
        concat({"a Megatron pipeline layout string (E embedding, t decoder layer, m MTP layer, L "
                "loss, '|' between chunks, x*N and (...)*N repeats): ",
                expected}));
  }

  void append(std::string& out, const std::string& piece, long long times) const {
    if (piece.size() * static_cast<std::size_t>(times) + out.size() > kMaxExpanded)
      fail(concat({"at most ", std::to_string(kMaxExpanded), " symbols once expanded"}));
    for (long long i = 0; i < times; ++i) out += piece;
  }

  // "*N" after a symbol or a group: N in [1, kMaxRepeat]; 1 when no '*' follows.
  long long repeat() {
    if (pos_ >= text_.size() || text_[pos_] != '*') return 1;
    const std::size_t star = pos_++;
    long long n = 0;
    std::size_t digits = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      n = n * 10 + (text_[pos_++] - '0');
      if (n > kMaxRepeat) fail(concat({"a repeat count of at most ", std::to_string(kMaxRepeat)}));
      ++digits;
    }
    if (digits == 0 || n < 1)
      fail(concat({"a count of 1 or more after the '*' at position ", std::to_string(star + 1)}));
    return n;
  }

  std::string sequence(int depth) {
    std::string out;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ')') {
        if (depth == 0) fail(concat({"a ')' only after a '(' (position ", std::to_string(pos_ + 1), ")"}));
        return out;
      }
      if (c == ',' || c == ' ') {  // Megatron strips commas; spaces carry nothing either
        ++pos_;
        continue;
      }
      if (c == '(') {
        // Bounded so that a hostile "((((..." cannot exhaust the stack; real layouts nest once or twice.
        if (depth >= kMaxDepth) fail(concat({"groups nested at most ", std::to_string(kMaxDepth), " deep"}));
        const std::size_t open = pos_++;
        const std::string inner = sequence(depth + 1);
        if (pos_ >= text_.size() || text_[pos_] != ')')
          fail(concat({"the '(' at position ", std::to_string(open + 1), " closed by a ')'"}));
        ++pos_;
        append(out, inner, repeat());
        continue;
      }
      if (c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|') {
        ++pos_;
        append(out, std::string(1, c), repeat());
        continue;
      }
      fail(concat({"only the characters E t m L | ( ) * , and digits after '*' ('", std::string(1, c),
                   "' at position ", std::to_string(pos_ + 1), ")"}));
    }
    return out;
  }

  const std::string& text_;
  const InputLocation& where_;
  const std::string& key_;
  std::size_t pos_ = 0;
};

}  // namespace

std::vector<std::string> expand_pipeline_layout_string(const std::string& text, const InputLocation& where,
                                                       const std::string& key) {
  const std::string flat = Expander(text, where, key).run();
  std::vector<std::string> chunks(1);
  for (const char c : flat) {
    if (c == '|') {
      chunks.emplace_back();
    } else {
      chunks.back() += c;
    }
  }
  return chunks;
}

}  // namespace moetwin
