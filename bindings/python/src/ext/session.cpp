// uaii.Session over uaii_session_create / _generate / _chat / _reset.
#include <pybind11/stl.h>

#include <climits>
#include <string>

#include "model.h"
#include "options.h"
#include "request.h"
#include "sampler.h"
#include "session_core.h"
#include "stream.h"

namespace uaii_py {
namespace {

class Session {
 public:
  Session(const Model& model, const SessionKwargs& kw) {
    const uaii_session_options o = SessionOptionsFrom(kw);

    auto core = std::make_shared<SessionCore>();
    core->model = model.handle();
    uaii_status st;
    std::string error;
    {
      py::gil_scoped_release nogil;  // allocates the KV cache
      st = uaii_session_create(core->model->h, &o, &core->h);
      if (st != UAII_OK) error = uaii_last_error();
    }
    if (st != UAII_OK) Fail(st, error);
    // The placement is fixed at creation: read once, so that reading it never needs the
    // session (a stream may be running on it) and still works after close().
    device_stats_.struct_size = sizeof(device_stats_);
    Check(uaii_session_device_stats(core->h, &device_stats_));
    device_ = device_stats_.device;  // the C string lives only as long as the session
    core_ = std::move(core);
  }

  py::dict DeviceStats() const {
    py::dict d;
    d["device"] = device_;
    d["budget_bytes"] = device_stats_.budget_bytes;
    d["resident_bytes"] = device_stats_.resident_bytes;
    d["host_bytes"] = device_stats_.host_bytes;
    d["staging_bytes"] = device_stats_.staging_bytes;
    d["requantized_weights"] = device_stats_.requantized_weights;
    return d;
  }

  py::object Run(Request request, bool stream) {
    std::shared_ptr<SessionCore> core = Live();
    core->Acquire();
    if (stream) {
      auto state = std::make_shared<StreamState>(core, std::move(request));
      {
        std::lock_guard<std::mutex> lock(core->mu);
        core->active = state;
      }
      state->Start();
      return py::cast(std::make_shared<Stream>(std::move(state)));
    }
    Outcome out;
    {
      py::gil_scoped_release nogil;
      out = RunRequest(core->h, request, nullptr, nullptr);
      core->Release();
    }
    if (out.status != UAII_OK) Fail(out.status, out.error);
    auto result = std::make_shared<GenerateResult>(MakeResult(out.result, std::move(out.text)));
    core->SetLastResult(result);
    return DecodeUtf8(result->text);
  }

  void Reset() {
    std::shared_ptr<SessionCore> core = Live();
    core->Acquire();
    uaii_status st = uaii_session_reset(core->h);
    std::string error = st == UAII_OK ? "" : uaii_last_error();
    core->Release();
    if (st != UAII_OK) Fail(st, error);
  }

  // Token-level calls (uaii_session_eval / _truncate / _step / _n_past).
  py::object Eval(const py::object& tokens, bool all_logits) {
    std::vector<int32_t> ids;
    if (!py::isinstance<py::iterable>(tokens) || py::isinstance<py::str>(tokens))
      throw py::type_error("tokens must be a sequence of int");
    for (const py::handle& t : tokens) {
      const int64_t v = t.cast<int64_t>();
      if (v < INT32_MIN || v > INT32_MAX) Fail(UAII_ERR_INVALID_ARGUMENT, "token " + std::to_string(v) + " is out of range");
      ids.push_back(static_cast<int32_t>(v));
    }
    std::shared_ptr<SessionCore> core = Live();
    const size_t n_vocab = uaii_model_n_vocab(core->model->h);
    py::object out = py::module_::import("array").attr("array")("f");
    std::vector<float> logits((all_logits ? ids.size() : 1) * n_vocab);
    core->Acquire();
    uaii_status st;
    std::string error;
    {
      py::gil_scoped_release nogil;
      st = uaii_session_eval(core->h, ids.data(), ids.size(), all_logits ? UAII_EVAL_ALL_LOGITS : 0, logits.data(),
                             logits.size(), nullptr);
      if (st != UAII_OK) error = uaii_last_error();
      core->Release();
    }
    if (st != UAII_OK) Fail(st, error);
    out.attr("frombytes")(py::bytes(reinterpret_cast<const char*>(logits.data()), logits.size() * sizeof(float)));
    return out;
  }

  int64_t NPast() { return uaii_session_n_past(Live()->h); }
  int64_t MaxContext() { return uaii_session_max_context(Live()->h); }

  void Truncate(int64_t n) {
    std::shared_ptr<SessionCore> core = Live();
    core->Acquire();
    uaii_status st = uaii_session_truncate(core->h, n);
    std::string error = st == UAII_OK ? "" : uaii_last_error();
    core->Release();
    if (st != UAII_OK) Fail(st, error);
  }

  py::tuple Step(const py::object& sampler) {
    std::shared_ptr<SamplerHandle> sh = SamplerOf(sampler);
    std::shared_ptr<SessionCore> core = Live();
    core->Acquire();
    int32_t token = -1;
    uint32_t flags = 0;
    uaii_status st;
    std::string error;
    {
      py::gil_scoped_release nogil;
      st = uaii_session_step(core->h, sh->h, &token, &flags);
      if (st != UAII_OK) error = uaii_last_error();
      core->Release();
    }
    if (st != UAII_OK) Fail(st, error);
    py::object stop = py::none();
    if (flags & UAII_STEP_END_OF_GENERATION) stop = py::str("end_of_generation");
    else if (flags & UAII_STEP_CONTEXT_FULL) stop = py::str("context_full");
    return py::make_tuple(token, stop);
  }

  std::shared_ptr<GenerateResult> LastResult() {
    if (!core_) return closed_last_result_;
    std::lock_guard<std::mutex> lock(core_->mu);
    return core_->last_result;
  }

  void Close() {
    if (!core_) return;
    StopActiveStream(core_);
    closed_last_result_ = LastResult();  // still readable after close
    core_.reset();  // a call still running on another thread keeps its own reference
  }
  bool closed() const { return core_ == nullptr; }

 private:
  // The session, after stopping a stream still open on it (a new call supersedes it).
  std::shared_ptr<SessionCore> Live() {
    Require(core_, "the session");
    std::shared_ptr<SessionCore> core = core_;
    StopActiveStream(core);
    return core;
  }

  static void StopActiveStream(const std::shared_ptr<SessionCore>& core) {
    std::shared_ptr<StreamState> active;
    {
      std::lock_guard<std::mutex> lock(core->mu);
      active = core->active.lock();
      core->active.reset();
    }
    if (!active) return;
    active->Cancel();
    py::gil_scoped_release nogil;
    active->Join();
  }

  std::shared_ptr<SessionCore> core_;
  std::shared_ptr<GenerateResult> closed_last_result_;
  uaii_device_stats device_stats_{};
  std::string device_;
};

constexpr const char* kSamplingDoc = R"doc(
Sampling keywords (None keeps the engine's default):
  max_tokens (256), temperature (0: greedy; > 0 samples), top_k (40; <= 0 off),
  top_p (0.95; 1 off), min_p (0.05; 0 off), repeat_penalty (1: off),
  presence_penalty (0), frequency_penalty (0), seed (42: the same seed
  reproduces a run), stop (a str or a list of str; the reply ends before the first
  one, which is not included).
Structured output (at most one): grammar (a GBNF str, llama.cpp's format, start rule
  root) or json_schema (a JSON Schema as a dict or JSON text): the reply follows it and
  ends where it is complete (InvalidArgumentError for an invalid one).
stream=False returns the reply as a str (session.last_result holds the usage);
stream=True returns a uaii.Stream of uaii.Event, ending with a 'done' event.
The GIL is released while the engine computes.
)doc";

}  // namespace

void BindSession(py::module_& m) {
  BindStream(m);
  py::class_<Session, std::shared_ptr<Session>>(m, "Session", R"doc(
A conversation with a model: its KV cache, sampling state and last result.

    uaii.Session(model, preset=None, ram_gb=None, kv_window=None, threads=None,
                 device="cpu", max_context=None, moe_top_k=None, moe_prefetch=False,
                 learn_calibration=False, draft=None, draft_max=None, draft_min=None,
                 draft_p_min=None, draft_rule=None, device_memory_bytes=None)

The C ABI's uaii_session_options (the C++ API's SessionOptions): preset: None /
"none" (everything resident, the default), "laptop", "desktop", "server", "phone".
ram_gb: a RAM budget in GiB (None: the preset's). kv_window: KV cache window in tokens
(None: the preset's, 0: unbounded up to max_context). threads: None uses the physical
cores. device: "cpu", "auto" (the first real GPU, else the CPU) or "vulkan[:N]" (uaii devices lists them).
device_memory_bytes: a GPU's memory for the weights (None: 90% of its largest memory
heap); weights past it stay in host memory the device reads across the bus, slower but
with the same logits (session.device_stats says where they went). max_context: None: 4096 or the model's
training context when smaller (more raises ValueError). moe_top_k: experts per token of a mixture-of-
experts model (None: the file's; fewer is an approximation). moe_prefetch: read ahead
the next layer's experts under a budget. learn_calibration: True folds what each generate / chat call
measured into the storage cost model's calibration in $UAII_HOME, as `uaii generate`
does (the C ABI's uaii_session_options.learn_calibration; docs/storage.md).
draft: speculative decoding (docs/speculative.md): a smaller uaii.Model with the same
vocabulary; a path (str or os.PathLike) to a drafter file: a gemma4-assistant GGUF for a
gemma4 model (it drafts over the model's KV cache and hidden state, so it is no
uaii.Model of its own) or any model file; or "auto" (the model's own
multi-token-prediction head; no architecture has one yet: InvalidArgumentError naming it). It proposes up to draft_max (1..16, default 16)
tokens a step, stopping below draft_p_min top probability (default 0.75); drafts shorter
than draft_min (default 0) are not checked; the model checks the rest in one batch.
draft_rule: "auto" (default: exact match for greedy requests and grammars, rejection
sampling otherwise), "exact" (the replies are the same tokens as without a draft) or
"rejection" (the target's distribution, more proposals kept). Usage.draft_tokens,
.draft_accepted_tokens and .draft_acceptance_rate count them. draft_model= and n_draft=
are aliases of draft= and draft_max=.

A session belongs to one thread at a time (a second thread's call raises
InvalidStateError); make one session per thread, they may share one model. Use it as
a context manager or call close().
)doc")
      .def(py::init([](const Model& model, std::optional<std::string> preset, std::optional<double> ram_gb,
                       std::optional<int64_t> kv_window, std::optional<int64_t> threads, std::string device,
                       std::optional<int64_t> max_context, std::optional<int64_t> moe_top_k, bool moe_prefetch,
                       bool learn_calibration, const py::object& draft, std::optional<int64_t> draft_max,
                       std::optional<int64_t> draft_min, std::optional<double> draft_p_min,
                       std::optional<std::string> draft_rule, std::optional<int64_t> device_memory_bytes,
                       const py::object& draft_model, std::optional<int64_t> n_draft) {
             SessionKwargs kw{std::move(preset), ram_gb, kv_window, threads, std::move(device), max_context,
                              moe_top_k, moe_prefetch, learn_calibration};
             if (!draft.is_none() && !draft_model.is_none())
               throw py::type_error("draft and draft_model are the same option: give one");
             if (draft_max && n_draft) throw py::type_error("draft_max and n_draft are the same option: give one");
             const py::object& d = draft.is_none() ? draft_model : draft;
             const char* name = draft.is_none() ? "draft_model" : "draft";
             const bool is_path = py::isinstance<py::str>(d) || py::hasattr(d, "__fspath__");
             if (py::isinstance<py::str>(d) && d.cast<std::string>() == "auto" && draft_model.is_none()) {
               kw.draft_auto = true;
             } else if (is_path && draft_model.is_none()) {
               kw.draft_path = py::module_::import("os").attr("fspath")(d).cast<std::string>();
               if (kw.draft_path.empty()) throw py::value_error("draft is an empty path");
             } else if (!d.is_none()) {
               if (!py::isinstance<Model>(d))
                 throw py::type_error(std::string(name) + " must be a uaii.Model" +
                                      (draft_model.is_none() ? ", a drafter file's path or \"auto\"" : ""));
               kw.draft_model = d.cast<const Model&>().handle();
             }
             kw.draft_max = draft_max ? draft_max : n_draft;
             kw.draft_min = draft_min;
             kw.draft_p_min = draft_p_min;
             kw.draft_rule = std::move(draft_rule);
             kw.device_memory_bytes = device_memory_bytes;
             return std::make_shared<Session>(model, kw);
           }),
           py::arg("model"), py::arg("preset") = py::none(), py::arg("ram_gb") = py::none(),
           py::arg("kv_window") = py::none(), py::arg("threads") = py::none(), py::arg("device") = "cpu",
           py::arg("max_context") = py::none(), py::arg("moe_top_k") = py::none(), py::arg("moe_prefetch") = false,
           py::arg("learn_calibration") = false, py::arg("draft") = py::none(), py::arg("draft_max") = py::none(),
           py::arg("draft_min") = py::none(), py::arg("draft_p_min") = py::none(), py::arg("draft_rule") = py::none(),
           py::arg("device_memory_bytes") = py::none(), py::arg("draft_model") = py::none(),
           py::arg("n_draft") = py::none())
      .def(
          "generate",
          [](Session& s, const py::object& prompt, std::optional<int64_t> max_tokens, std::optional<double> temperature,
             std::optional<int64_t> top_k, std::optional<double> top_p, std::optional<double> min_p,
             std::optional<double> repeat_penalty, std::optional<double> presence_penalty,
             std::optional<double> frequency_penalty, py::object seed, py::object stop, py::object grammar,
             py::object json_schema, bool stream) {
            Request r = Request::Generate(
                prompt, WithGrammar(MakeSamplingArgs(max_tokens, temperature, top_k, top_p, min_p, repeat_penalty,
                                                     presence_penalty, frequency_penalty, seed, stop),
                                    grammar, json_schema));
            return s.Run(std::move(r), stream);
          },
          py::arg("prompt"), py::kw_only(), py::arg("max_tokens") = py::none(), py::arg("temperature") = py::none(),
          py::arg("top_k") = py::none(), py::arg("top_p") = py::none(), py::arg("min_p") = py::none(),
          py::arg("repeat_penalty") = py::none(), py::arg("presence_penalty") = py::none(),
          py::arg("frequency_penalty") = py::none(), py::arg("seed") = py::none(), py::arg("stop") = py::none(),
          py::arg("grammar") = py::none(), py::arg("json_schema") = py::none(), py::arg("stream") = false,
          (std::string(R"doc(
Continues the raw `prompt` text (BOS as the model's metadata says). `prompt` is the
whole text: the session reuses its KV cache for the longest prefix it already holds.
)doc") + kSamplingDoc).c_str())
      .def(
          "chat",
          [](Session& s, const py::object& messages, const py::object& tools, std::optional<bool> think,
             std::optional<int64_t> max_tokens, std::optional<double> temperature, std::optional<int64_t> top_k,
             std::optional<double> top_p, std::optional<double> min_p, std::optional<double> repeat_penalty,
             std::optional<double> presence_penalty, std::optional<double> frequency_penalty, py::object seed,
             py::object stop, py::object grammar, py::object json_schema, bool stream) {
            Request r = Request::Chat(messages, tools, think,
                                      WithGrammar(MakeSamplingArgs(max_tokens, temperature, top_k, top_p, min_p,
                                                                   repeat_penalty, presence_penalty, frequency_penalty,
                                                                   seed, stop),
                                                  grammar, json_schema));
            return s.Run(std::move(r), stream);
          },
          py::arg("messages"), py::arg("tools") = py::none(), py::kw_only(), py::arg("think") = py::none(),
          py::arg("max_tokens") = py::none(), py::arg("temperature") = py::none(), py::arg("top_k") = py::none(),
          py::arg("top_p") = py::none(), py::arg("min_p") = py::none(), py::arg("repeat_penalty") = py::none(),
          py::arg("presence_penalty") = py::none(), py::arg("frequency_penalty") = py::none(),
          py::arg("seed") = py::none(), py::arg("stop") = py::none(), py::arg("grammar") = py::none(),
          py::arg("json_schema") = py::none(), py::arg("stream") = false,
          (std::string(R"doc(
One chat turn. `messages` is an OpenAI-style list of messages
([{"role": "user", "content": "..."}], or the same as a JSON string), `tools` a list
of tool declarations or None, `think` True / False / None (the template's default).
The prompt is rendered with the model's own chat template (NotFoundError when the
model has none); the session reuses its KV cache for the part of the conversation it
has already seen. Streamed events split the reply into 'text', 'thinking' and
'tool_call' events.
)doc") + kSamplingDoc).c_str())
      .def("reset", &Session::Reset, "Forgets the conversation (the KV cache).")
      .def("eval", &Session::Eval, py::arg("tokens"), py::arg("all_logits") = false, R"doc(
Appends `tokens` (ids) at positions n_past.. and evaluates them; returns the logits as
array.array('f'): the last row (model vocabulary size floats), or with all_logits every
row, row-major. The last row is kept for step(). generate / chat afterwards reuse the
cache exactly. The GIL is released while the engine computes.
)doc")
      .def_property_readonly("n_past", &Session::NPast, "Positions the KV cache holds.")
      .def_property_readonly("max_context", &Session::MaxContext, "Positions the session can hold.")
      .def_property_readonly("device_stats", &Session::DeviceStats, R"doc(
Where the session's weights live (the C ABI's uaii_session_device_stats), fixed when it
was created, as a dict: device (what device= resolved to, "cpu", "vulkan:0"),
budget_bytes (the device memory the weights may take), resident_bytes (in device
memory), host_bytes (in host memory read across the bus), staging_bytes (the device
buffer host weights are copied into before each use; 0: read in place),
requantized_weights (weight types without a device kernel, requantized to Q8_0). All
zero on the CPU. Still readable after close().
)doc")
      .def("truncate", &Session::Truncate, py::arg("n"), "Forgets positions >= n (0 <= n <= n_past).")
      .def("step", &Session::Step, py::arg("sampler"), R"doc(
One token of a generation you drive: samples from the last evaluated row (eval's or the
previous step's) with `sampler` (a uaii.Sampler), records it there and evaluates it.
Returns (token, stop): stop is None, or "end_of_generation" / "context_full" when the
token was not evaluated. InvalidStateError when there is no row to sample from (nothing
evaluated since the session was created, reset or truncated, or since generate / chat).
)doc")
      .def_property_readonly("last_result", &Session::LastResult,
                             "The uaii.GenerateResult of the last finished call (None before the first); still readable after "
                             "close().")
      .def_property_readonly("closed", &Session::closed, "True after close().")
      .def("close", &Session::Close,
           "Stops a stream still running on the session and frees it (idempotent); later calls raise "
           "InvalidStateError.")
      .def("__enter__", [](std::shared_ptr<Session> self) { return self; })
      .def("__exit__", [](Session& self, py::args) { self.Close(); });
}

}  // namespace uaii_py
