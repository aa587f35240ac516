// Writing output files safely in shared folders (issue 55 item 2): every temporary file has a fresh
// random name, is created with O_CREAT|O_EXCL|O_NOFOLLOW in the target's own folder (so a link planted
// at a guessable name is never followed) and is renamed into place (rename replaces a link at the target,
// it never writes through one). And the end-of-run check of standard output.
#pragma once

#include <string>

namespace moetwin {

// A new, empty temporary file beside `target`, named `TARGET.<16 hex digits>.tmp-moetwin`, removed by the
// destructor unless commit() moved it into place. Throws InputError naming `target` when it cannot be
// created. Open a library (libhdf5) on path() to fill it; fd() is an O_WRONLY descriptor of it.
class StagedFile {
 public:
  explicit StagedFile(const std::string& target);
  ~StagedFile();
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  const std::string& path() const { return path_; }
  int fd() const { return fd_; }
  // Writes all of `content` at the current offset; throws InputError ("write error: REASON (nothing
  // written)") naming the target.
  void write(const std::string& content);
  // Closes the descriptor (reporting what only the close sees) and renames the file onto the target.
  void commit();

 private:
  std::string target_;
  std::string path_;
  int fd_ = -1;
  bool committed_ = false;
};

// Whether `name` (a file name, no folder) is a temporary file StagedFile made for a target named
// `target_name` (also without folder): for removing what a killed child process left behind.
bool is_staged_name_for(const std::string& name, const std::string& target_name);

// Throws InputError when `path` cannot be an output file: a directory ("is a directory, expected a file
// to write") or in a folder that does not exist ("output folder DIR does not exist (create it first)").
// Outputs never create folders: a typo in a path is reported, not turned into a new tree.
void check_output_path(const std::string& path);

// Writes `content` to `path` atomically (a StagedFile renamed into place), so a failure never leaves a
// half-written output. A device, pipe or socket (/dev/stdout, /dev/full, a FIFO) is written in place.
// Throws InputError (check_output_path's, or if the folder is not writable).
void write_file_atomically(const std::string& path, const std::string& content);

// Flushes and closes standard output (both std::cout and stdio's stdout), once, at the end of main:
// returns "" or "write error: REASON". A redirect into a full disk (`> /dev/full`) shows at a write, at
// the flush or only at the close (NFS, quotas); every program turns a failure into exit 2.
std::string close_standard_output();
// close_standard_output for the end of main: exit_code::ok, or exit_code::input_error after "error:
// standard output: write error: REASON (output lost)" on stderr.
int check_standard_output();

}  // namespace moetwin
