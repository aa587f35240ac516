// What launchers put before each line of a tool's stdout, for the importers to look past.
#pragma once

#include <cctype>
#include <string_view>

namespace moetwin {

// Strips one launcher tag from the start of `line`: Open MPI's --tag-output "[1,0]<stdout>:" (or
// "<stderr>:"), MPICH/Intel MPI's -prepend-rank "[0] ", and srun -l's "12: ". Other lines come back
// unchanged. nccl-tests data rows and DeepEP lines never start so: a row starts with a byte count, a
// DeepEP line with "[config]", "[layout]", "[tuning]" or "[rank N]".
inline std::string_view strip_launcher_prefix(std::string_view line) {
  std::size_t i = 0;
  const auto digits = [&](std::size_t from) {
    std::size_t j = from;
    while (j < line.size() && std::isdigit(static_cast<unsigned char>(line[j]))) ++j;
    return j;
  };
  if (!line.empty() && line[0] == '[') {
    i = digits(1);
    if (i > 1 && i < line.size() && line[i] == ',') {  // "[job,rank]<stdout>:"
      const std::size_t j = digits(i + 1);
      if (j > i + 1 && j < line.size() && line[j] == ']') {
        std::string_view rest = line.substr(j + 1);
        if (rest.substr(0, 8) == "<stdout>" || rest.substr(0, 8) == "<stderr>") rest.remove_prefix(8);
        if (!rest.empty() && rest[0] == ':') rest.remove_prefix(1);
        return rest;
      }
    } else if (i > 1 && i + 1 < line.size() && line[i] == ']' && line[i + 1] == ' ') {  // "[0] "
      return line.substr(i + 2);
    }
    return line;
  }
  std::size_t start = 0;  // srun pads the rank: " 3: " beside "12: "
  while (start < line.size() && line[start] == ' ') ++start;
  i = digits(start);
  if (i > start && i + 1 < line.size() && line[i] == ':' && line[i + 1] == ' ') return line.substr(i + 2);
  return line;
}

}  // namespace moetwin
