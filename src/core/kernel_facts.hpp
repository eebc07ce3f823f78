#pragma once
// The facts of a compiled kernel (and of a cell's failure) as the worker gives them, typed: the
// parts of the cell answers (src/core/cell_answer.hpp), named as
// python/portcheck_worker/protocol.schema.json names them. CellResult carries the metadata, the
// export and the reproducer in these types; the report writes them with to_json.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace portcheck {

// failure_error: what raised.
struct FailureError {
  std::string type;
  std::string message;
  std::string traceback;
};

// autotuner_answer: what the release's autotuner does with a config that fails so.
struct AutotunerAnswer {
  bool skips = false;
  std::string raises;  // the exception's class name
};

// launch_verdict: what the compiled kernel needs to launch, and what of it the target's limits
// (those the request carried) do not allow.
struct LaunchVerdict {
  std::map<std::string, std::uint64_t> needs;
  std::vector<std::string> problems;
  std::optional<std::vector<std::string>> exceeded;  // the names in needs of the problems
  std::optional<AutotunerAnswer> autotuner;
};

// kernel_metadata: the compiled kernel's metadata as the installed release names it; a member
// the release does not have is absent. The counts Triton reads with get_int_attr are null where
// a pass left one unset: absent and null read alike here (nullopt), and are written as absent.
struct KernelMetadata {
  struct Target {
    std::string backend;
    using Arch = std::variant<std::string, std::int64_t>;
    Arch arch;  // "gfx942", or a capability such as 90
    std::int64_t warp_size = 0;
  };
  std::optional<std::string> name;
  std::optional<std::string> hash;
  std::optional<std::int64_t> num_warps;
  std::optional<std::int64_t> num_ctas;
  std::optional<std::int64_t> num_stages;
  std::optional<std::int64_t> shared;
  std::optional<std::int64_t> tmem_size;
  std::optional<std::int64_t> global_scratch_size;
  std::optional<std::int64_t> global_scratch_align;
  std::optional<std::int64_t> profile_scratch_size;
  std::optional<std::int64_t> profile_scratch_align;
  std::optional<std::vector<std::int64_t>> cluster_dims;
  std::optional<std::int64_t> maxnreg;
  std::optional<std::int64_t> warp_size;
  std::optional<Target> target;
  std::optional<std::string> triton_version;
};

// kernel_resources: what the binary says it needs; on NVIDIA the cubin's counts, on AMD the
// kernel descriptor's (absent or null where the assembly lacks one: nullopt).
struct KernelResources {
  std::optional<std::int64_t> registers;
  std::optional<std::int64_t> stack_bytes;
  std::optional<std::int64_t> local_bytes;
  std::optional<std::int64_t> static_shared_bytes;
  std::optional<std::int64_t> vgprs;
  std::optional<std::int64_t> sgprs;
  std::optional<std::int64_t> vgpr_spills;
  std::optional<std::int64_t> sgpr_spills;
  std::optional<std::int64_t> lds_bytes;
  std::optional<std::int64_t> scratch_bytes;
  std::optional<std::string> error;  // why they could not be read
};

// export_files: what a compile with export_dir wrote.
struct ExportFiles {
  struct Param {
    std::string name;
    std::string kind;  // argument, or the scratch parameter's name
    std::string triton_type;
    std::optional<bool> divisible_by_16;
  };
  struct Folded {
    std::string name;
    nlohmann::json value;  // the constant: a number, a boolean or text
    std::string reason;
  };
  // How it launches, by the rules that judge every cell (compile/launch_rules.py launch_needs).
  struct Launch {
    std::uint64_t threads_per_block = 0;
    std::uint64_t shared_bytes = 0;
    std::uint64_t num_ctas = 0;
    std::optional<std::uint64_t> tensor_memory_columns;
    bool needs_shared_opt_in = false;
  };
  std::string directory;
  std::string binary;
  std::string assembly;
  std::vector<Param> params;
  std::vector<Folded> folded;
  Launch launch;
};

// shrink_figures: what --shrink did.
struct ShrinkFigures {
  std::int64_t before_lines = 0;
  std::int64_t after_lines = 0;
  double seconds = 0;
  std::int64_t candidates = 0;
  std::string note;
};

// A repro_answer's reproducer: its text, or why none could be written (error).
struct ReproducerText {
  std::optional<std::string> text;
  std::optional<std::int64_t> lines;
  std::optional<bool> imports_module;
  std::optional<std::vector<std::string>> blockers;
  std::optional<ShrinkFigures> shrink;  // null and absent alike: no shrink
  std::optional<std::string> error;
};

// The integer members of KernelMetadata (and of KernelResources) by their names in the schema: the
// one list the answer's reader and writer and the report's reader go by.
using MetadataCount = std::pair<const char*, std::optional<std::int64_t> KernelMetadata::*>;
extern const std::array<MetadataCount, 11> kMetadataCounts;
using ResourceCount = std::pair<const char*, std::optional<std::int64_t> KernelResources::*>;
extern const std::array<ResourceCount, 10> kResourceCounts;

// JSON forms of the parts the report carries as objects (CellResult's metadata and resources).
[[nodiscard]] nlohmann::json to_json(const KernelMetadata& metadata);
[[nodiscard]] nlohmann::json to_json(const KernelResources& resources);
[[nodiscard]] nlohmann::json to_json(const AutotunerAnswer& autotuner);
[[nodiscard]] nlohmann::json to_json(const LaunchVerdict& launch);
[[nodiscard]] nlohmann::json to_json(const ExportFiles& exported);
[[nodiscard]] nlohmann::json to_json(const ReproducerText& repro);

}  // namespace portcheck
