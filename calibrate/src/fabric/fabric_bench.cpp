// libfabric RDM benchmark (see fabric_bench.hpp). Single-threaded: every wait polls both endpoints'
// completion queues, which also drives providers with manual progress.
#include "moetwin/calibrate/fabric_bench.hpp"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "moetwin/calibrate/no_device_error.hpp"

namespace moetwin {

namespace {

using Clock = std::chrono::steady_clock;

// API version we ask for: 1.14 has FI_HMEM and fi_mr_regattr's iface (EFA needs >= 1.10).
constexpr std::uint32_t kApiVersion = (1U << 16) | 14U;

[[noreturn]] void fail(const std::string& what, int rc) {
  throw NoDeviceError("libfabric: " + what + ": " + fi_strerror(-rc) + " (" + std::to_string(rc) + ")");
}

void check(int rc, const std::string& what) {
  if (rc != 0) fail(what, rc);
}

// One endpoint with its own completion queue and address vector; the domain may be shared.
struct Endpoint {
  fi_info* info = nullptr;  // owned by Bench
  fid_domain* domain = nullptr;
  bool owns_domain = false;
  fid_cq* cq = nullptr;
  fid_av* av = nullptr;
  fid_ep* ep = nullptr;
  fi_addr_t peer = FI_ADDR_UNSPEC;
  void* send_buf = nullptr;
  void* recv_buf = nullptr;
  fid_mr* send_mr = nullptr;
  fid_mr* recv_mr = nullptr;
  void* send_desc = nullptr;
  void* recv_desc = nullptr;
  std::int64_t sends_posted = 0;
  std::int64_t sends_done = 0;
  std::int64_t recvs_done = 0;
  fi_context2 send_ctx{};
  fi_context2 recv_ctx{};
};

class Bench {
 public:
  explicit Bench(const FabricBenchOptions& o) : o_(o) {}
  ~Bench() { close_all(); }
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  FabricBenchResult run() {
    open();
    FabricBenchResult result;
    result.provider = info_a_->fabric_attr->prov_name;
    const std::uint32_t v = fi_version();
    result.libfabric_version = std::to_string(FI_MAJOR(v)) + "." + std::to_string(FI_MINOR(v));
    const std::size_t cap = std::min(o_.max_bytes, info_a_->ep_attr->max_msg_size);
    for (const std::size_t bytes : fabric_sizes(o_.min_bytes, cap)) {
      result.experiments.push_back(latency(bytes, result.provider));
      result.experiments.push_back(bandwidth(bytes, result.provider));
    }
    return result;
  }

 private:
  fi_info* hints() const {
    fi_info* h = fi_allocinfo();
    if (h == nullptr) throw std::bad_alloc();
    h->ep_attr->type = FI_EP_RDM;
    h->caps = FI_MSG | (o_.buffers.cuda ? FI_HMEM : 0);
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->domain_attr->mr_mode =
        FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | (o_.buffers.cuda ? FI_MR_HMEM : 0);
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    h->fabric_attr->prov_name = strdup(o_.provider.c_str());
    return h;
  }

  fi_info* query(const std::string& domain) {
    fi_info* h = hints();
    if (!domain.empty()) h->domain_attr->name = strdup(domain.c_str());
    fi_info* info = nullptr;
    const int rc = fi_getinfo(kApiVersion, nullptr, nullptr, 0, h, &info);
    fi_freeinfo(h);
    if (rc == -FI_ENODATA || info == nullptr) {
      throw NoDeviceError("libfabric provider '" + o_.provider + "'" +
                          (domain.empty() ? "" : " domain '" + domain + "'") +
                          " offers no FI_EP_RDM endpoint" + (o_.buffers.cuda ? " with FI_HMEM" : "") +
                          " here (fi_info -p " + o_.provider + " lists what is available)");
    }
    check(rc, "fi_getinfo");
    return info;
  }

  void open() {
    info_a_ = query(o_.domain_a);
    info_b_ = o_.domain_b.empty() || o_.domain_b == o_.domain_a ? nullptr : query(o_.domain_b);
    check(fi_fabric(info_a_->fabric_attr, &fabric_, nullptr), "fi_fabric");
    a_.info = info_a_;
    check(fi_domain(fabric_, info_a_, &a_.domain, nullptr), "fi_domain");
    a_.owns_domain = true;
    b_.info = info_b_ != nullptr ? info_b_ : info_a_;
    if (info_b_ != nullptr) {
      check(fi_domain(fabric_, info_b_, &b_.domain, nullptr), "fi_domain (B)");
      b_.owns_domain = true;
    } else {
      b_.domain = a_.domain;
    }
    setup(a_);
    setup(b_);
    connect(a_, b_);
    connect(b_, a_);
  }

  void setup(Endpoint& e) {
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_MSG;
    cq_attr.size = static_cast<std::size_t>(o_.window) * 4 + 16;
    check(fi_cq_open(e.domain, &cq_attr, &e.cq, nullptr), "fi_cq_open");
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    check(fi_av_open(e.domain, &av_attr, &e.av, nullptr), "fi_av_open");
    check(fi_endpoint(e.domain, e.info, &e.ep, nullptr), "fi_endpoint");
    check(fi_ep_bind(e.ep, &e.cq->fid, FI_SEND | FI_RECV), "fi_ep_bind cq");
    check(fi_ep_bind(e.ep, &e.av->fid, 0), "fi_ep_bind av");
    check(fi_enable(e.ep), "fi_enable");
    const std::size_t bytes =
        std::max<std::size_t>(std::min(o_.max_bytes, e.info->ep_attr->max_msg_size), 64);
    e.send_buf = o_.buffers.allocate(bytes);
    e.recv_buf = o_.buffers.allocate(bytes);
    register_buffer(e, e.send_buf, bytes, FI_SEND, &e.send_mr, &e.send_desc);
    register_buffer(e, e.recv_buf, bytes, FI_RECV, &e.recv_mr, &e.recv_desc);
  }

  void register_buffer(Endpoint& e, void* buf, std::size_t bytes, std::uint64_t access, fid_mr** mr,
                       void** desc) {
    const bool local = (e.info->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
    const bool hmem = o_.buffers.cuda && (e.info->domain_attr->mr_mode & FI_MR_HMEM) != 0;
    if (!local && !hmem) return;
    iovec iov{buf, bytes};
    fi_mr_attr attr{};
    attr.mr_iov = &iov;
    attr.iov_count = 1;
    attr.access = access;
    attr.requested_key = next_key_++;
    attr.iface = o_.buffers.cuda ? FI_HMEM_CUDA : FI_HMEM_SYSTEM;
    attr.device.cuda = o_.buffers.cuda_device;
    check(fi_mr_regattr(e.domain, &attr, 0, mr), "fi_mr_regattr");
    *desc = fi_mr_desc(*mr);
  }

  void connect(Endpoint& self, const Endpoint& peer) {
    std::array<char, 256> name{};
    std::size_t len = name.size();
    check(fi_getname(&peer.ep->fid, name.data(), &len), "fi_getname");
    const int n = fi_av_insert(self.av, name.data(), 1, &self.peer, 0, nullptr);
    if (n != 1) fail("fi_av_insert", n < 0 ? n : -FI_EINVAL);
  }

  // Reads both completion queues once; tallies send and receive completions.
  void progress() {
    for (Endpoint* e : {&a_, &b_}) {
      std::array<fi_cq_msg_entry, 16> entries{};
      const ssize_t n = fi_cq_read(e->cq, entries.data(), entries.size());
      if (n == -FI_EAGAIN) continue;
      if (n == -FI_EAVAIL) {
        fi_cq_err_entry err{};
        fi_cq_readerr(e->cq, &err, 0);
        throw NoDeviceError(std::string("libfabric completion error: ") + fi_strerror(err.err));
      }
      if (n < 0) fail("fi_cq_read", static_cast<int>(n));
      for (ssize_t i = 0; i < n; ++i) {
        if ((entries[static_cast<std::size_t>(i)].flags & FI_RECV) != 0)
          ++e->recvs_done;
        else
          ++e->sends_done;
      }
    }
  }

  template <typename Done>
  void wait(Done done, const char* what) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(o_.timeout_s);
    while (!done()) {
      progress();
      if (Clock::now() > deadline) {
        throw NoDeviceError(std::string("libfabric: timed out after ") + std::to_string(o_.timeout_s) +
                            " s waiting for " + what + " (provider " + o_.provider + ")");
      }
    }
  }

  // Posts with retry on -FI_EAGAIN (queue full), progressing meanwhile; bounded by the deadline.
  template <typename Post>
  void post(Post op, const char* what) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(o_.timeout_s);
    for (;;) {
      const ssize_t rc = op();
      if (rc == 0) return;
      if (rc != -FI_EAGAIN) fail(what, static_cast<int>(rc));
      progress();
      if (Clock::now() > deadline) throw NoDeviceError(std::string("libfabric: timed out posting ") + what);
    }
  }

  void post_recv(Endpoint& e, std::size_t bytes) {
    post([&] { return fi_recv(e.ep, e.recv_buf, bytes, e.recv_desc, e.peer, &e.recv_ctx); }, "fi_recv");
  }
  void post_send(Endpoint& e, std::size_t bytes) {
    post([&] { return fi_send(e.ep, e.send_buf, bytes, e.send_desc, e.peer, &e.send_ctx); }, "fi_send");
    ++e.sends_posted;
  }

  Experiment latency(std::size_t bytes, const std::string& provider) {
    Experiment x = base("fabric_latency", "latency", bytes, provider);
    for (int i = 0; i < o_.warmup + o_.iterations; ++i) {
      const std::int64_t a_recv = a_.recvs_done + 1;
      const std::int64_t b_recv = b_.recvs_done + 1;
      post_recv(b_, bytes);
      post_recv(a_, bytes);
      const auto t0 = Clock::now();
      post_send(a_, bytes);
      wait([&] { return b_.recvs_done >= b_recv; }, "ping");
      post_send(b_, bytes);
      wait([&] { return a_.recvs_done >= a_recv; }, "pong");
      const auto t1 = Clock::now();
      // Half the round trip: one-way latency, seconds.
      if (i >= o_.warmup) x.samples.push_back(std::chrono::duration<double>(t1 - t0).count() / 2);
    }
    drain_sends();
    return x;
  }

  Experiment bandwidth(std::size_t bytes, const std::string& provider) {
    Experiment x = base("fabric_bandwidth", "bandwidth", bytes, provider);
    x.params["window"] = o_.window;
    const int warm = std::min(o_.warmup, 2);
    for (int i = 0; i < warm + o_.bw_iterations; ++i) {
      const std::int64_t target = b_.recvs_done + o_.window;
      for (int w = 0; w < o_.window; ++w) post_recv(b_, bytes);
      const auto t0 = Clock::now();
      for (int w = 0; w < o_.window; ++w) post_send(a_, bytes);
      wait([&] { return b_.recvs_done >= target; }, "streamed messages");
      const auto t1 = Clock::now();
      // Time per message in a window of `window` messages in flight, seconds; bandwidth = bytes / sample.
      if (i >= warm) x.samples.push_back(std::chrono::duration<double>(t1 - t0).count() / o_.window);
    }
    drain_sends();
    return x;
  }

  void drain_sends() {
    // Every send completes; waiting here keeps counters aligned before the next size.
    wait([&] { return a_.sends_done >= a_.sends_posted && b_.sends_done >= b_.sends_posted; },
         "send completions");
  }

  Experiment base(const char* kind, const char* what, std::size_t bytes, const std::string& provider) const {
    Experiment x;
    x.kind = kind;
    // Not = "s": GCC 12 -O3 flags assigning a one-character literal (-Wrestrict false positive, GCC
    // bug 105329).
    x.unit = std::string("s");
    x.name = std::string("fabric.") + o_.provider + "." + what + "." + std::to_string(bytes);
    x.params["bytes"] = static_cast<double>(bytes);
    x.labels["provider"] = provider;
    x.labels["buffer"] = o_.buffers.cuda ? "cuda" : "host";
    x.labels["domain_a"] = a_.info->domain_attr->name != nullptr ? a_.info->domain_attr->name : "";
    x.labels["domain_b"] = b_.info->domain_attr->name != nullptr ? b_.info->domain_attr->name : "";
    return x;
  }

  void close_endpoint(Endpoint& e) {
    if (e.ep != nullptr) fi_close(&e.ep->fid);
    if (e.send_mr != nullptr) fi_close(&e.send_mr->fid);
    if (e.recv_mr != nullptr) fi_close(&e.recv_mr->fid);
    if (e.av != nullptr) fi_close(&e.av->fid);
    if (e.cq != nullptr) fi_close(&e.cq->fid);
    if (e.send_buf != nullptr) o_.buffers.release(e.send_buf);
    if (e.recv_buf != nullptr) o_.buffers.release(e.recv_buf);
    e = Endpoint{};
  }

  void close_all() {
    fid_domain* da = a_.owns_domain ? a_.domain : nullptr;
    fid_domain* db = b_.owns_domain ? b_.domain : nullptr;
    close_endpoint(a_);
    close_endpoint(b_);
    if (db != nullptr) fi_close(&db->fid);
    if (da != nullptr) fi_close(&da->fid);
    if (fabric_ != nullptr) fi_close(&fabric_->fid);
    if (info_a_ != nullptr) fi_freeinfo(info_a_);
    if (info_b_ != nullptr) fi_freeinfo(info_b_);
  }

  FabricBenchOptions o_;
  fi_info* info_a_ = nullptr;
  fi_info* info_b_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  Endpoint a_;
  Endpoint b_;
  std::uint64_t next_key_ = 1;
};

}  // namespace

FabricBuffers host_fabric_buffers() {
  FabricBuffers b;
  // 4 KiB alignment: page-aligned buffers register cheaply with every provider.
  b.allocate = [](std::size_t bytes) {
    void* p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    if (p == nullptr) throw std::bad_alloc();
    std::memset(p, 0, bytes);
    return p;
  };
  b.release = [](void* p) { std::free(p); };
  return b;
}

std::vector<std::size_t> fabric_sizes(std::size_t min_bytes, std::size_t max_bytes) {
  std::vector<std::size_t> out;
  for (std::size_t s = std::max<std::size_t>(min_bytes, 1); s <= max_bytes; s *= 2) out.push_back(s);
  if (out.empty() || out.back() != max_bytes) {
    if (max_bytes >= min_bytes) out.push_back(max_bytes);
  }
  return out;
}

FabricBenchResult run_fabric_bench(const FabricBenchOptions& options) {
  if (options.iterations < 1 || options.window < 1 || options.bw_iterations < 1 || options.timeout_s <= 0) {
    throw std::invalid_argument("fabric bench: iterations, window and timeout must be positive");
  }
  Bench bench(options);
  return bench.run();
}

}  // namespace moetwin
