#include "io/ms/model_journal.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "io/ms/ms_error.hpp"
#include "io/ms/ms_lock.hpp"
#include "io/ms/ms_writer.hpp"
#include "io/stage_folder.hpp"
#include "io/stage_pointer.hpp"
#include "io/test_pause.hpp"

namespace gpuclean::io::ms {
namespace {

constexpr char kMagic[] = "gpuclean-model-journal 1\n";
constexpr char kEnd[] = "end\n";

template <typename T>
void put(std::ofstream& out, const T& v) {
  out.write(reinterpret_cast<const char*>(&v), sizeof v);
}
void put(std::ofstream& out, const std::string& s) {
  put(out, static_cast<std::uint64_t>(s.size()));
  out.write(s.data(), static_cast<std::streamsize>(s.size()));
}
template <typename T>
void put(std::ofstream& out, const std::vector<T>& v) {
  put(out, static_cast<std::uint64_t>(v.size()));
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
}

struct Reader {
  std::ifstream in;
  std::string path;
  template <typename T>
  void get(T& v) {
    if (!in.read(reinterpret_cast<char*>(&v), sizeof v)) bad();
  }
  void get(std::string& s) {
    std::uint64_t n = 0;
    get(n);
    if (n > (1u << 20)) bad();
    s.resize(n);
    if (!in.read(s.data(), static_cast<std::streamsize>(n))) bad();
  }
  template <typename T>
  void get(std::vector<T>& v) {
    std::uint64_t n = 0;
    get(n);
    v.resize(n);
    if (!in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(T)))) bad();
  }
  [[noreturn]] void bad() const {
    throw MsError(MsError::Kind::kIo, "the MODEL_DATA journal " + path + " is damaged; remove its stage folder");
  }
};

}  // namespace

void write_model_journal(const std::string& path, const MsSelection& s, const std::vector<std::uint64_t>& rows,
                         const std::vector<std::complex<float>>& values, std::optional<bool> reset) {
  register_model_journal();  // the commit that applies it finds the applier
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(kMagic, sizeof kMagic - 1);
  put(out, s.path);
  put(out, s.data_column);
  put(out, s.model_column);
  put(out, static_cast<std::uint64_t>(s.channel_begin));
  put(out, static_cast<std::uint64_t>(s.channel_end));
  put(out, static_cast<std::uint64_t>(s.ncorr));
  put(out, static_cast<std::uint8_t>(s.reversed));
  put(out, static_cast<std::uint8_t>(s.rule.kind));
  put(out, static_cast<std::uint64_t>(s.rule.a));
  put(out, static_cast<std::uint64_t>(s.rule.b));
  put(out, static_cast<std::uint8_t>(reset ? *reset : model_column_needs_reset(s)));  // before anything changes
  put(out, rows);
  put(out, values);
  out.write(kEnd, sizeof kEnd - 1);
  out.flush();
  if (!out)
    throw MsError(MsError::Kind::kIo, "cannot write the MODEL_DATA journal " + path + ": " + std::strerror(errno) +
                                          ". Check the free space of the output folder.");
}

bool apply_model_journal(const std::string& path, const std::string& ms) {
  std::unique_ptr<MsWriteLock> lock;
  if (!holds_ms_lock(ms)) {
    try {
      lock = std::make_unique<MsWriteLock>(ms);
    } catch (const MsError& e) {
      if (e.kind() == MsError::Kind::kBusy) return false;
      throw;
    }
  }
  Reader r{std::ifstream(path, std::ios::binary), path};
  char magic[sizeof kMagic - 1];
  if (!r.in.read(magic, sizeof magic) || std::memcmp(magic, kMagic, sizeof magic) != 0) r.bad();
  MsSelection s;
  std::uint64_t begin = 0, end = 0, ncorr = 0, a = 0, b = 0;
  std::uint8_t reversed = 0, kind = 0, reset = 0;
  r.get(s.path);
  r.get(s.data_column);
  r.get(s.model_column);
  r.get(begin), r.get(end), r.get(ncorr), r.get(reversed), r.get(kind), r.get(a), r.get(b), r.get(reset);
  std::vector<std::uint64_t> rows;
  std::vector<std::complex<float>> values;
  r.get(rows);
  r.get(values);
  char tail[sizeof kEnd - 1];
  if (!r.in.read(tail, sizeof tail) || std::memcmp(tail, kEnd, sizeof tail) != 0) r.bad();
  s.path = ms;
  s.channel_begin = begin, s.channel_end = end, s.ncorr = ncorr, s.reversed = reversed != 0;
  if (kind > static_cast<std::uint8_t>(StokesRule::Kind::kDiffI)) r.bad();
  s.rule.kind = static_cast<StokesRule::Kind>(kind);
  s.rule.a = a, s.rule.b = b;
  remove_orphan_storage(ms);  // what an earlier attempt stopped while adding the column left
  ModelDataWriter writer(s, reset != 0);
  test_pause("model");
  writer.write(rows, values);
  writer.finish();
  return true;
}

void register_model_journal() { set_journal_applier(&apply_model_journal); }

std::string settle_stopped_commit(const std::string& ms) {
  const std::optional<std::string> stage = read_stage_pointer(ms);
  if (!stage) return "";
  std::string line = std::filesystem::exists(*stage) ? settle_stopped_stage(*stage)
                                                     : "removed the note of a stopped run's commit";
  if (read_stage_pointer(ms) == stage) remove_stage_pointer(ms);  // a stage without a decision
  return line + " [" + ms + "]";
}

}  // namespace gpuclean::io::ms
