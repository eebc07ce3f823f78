#pragma once
// What the worker answers for one cell, as the tool uses it: a compile's compile_result, a
// reproducer request's repro_answer, a reproducer's reproducer_result, and the cell_failure an
// inspection gives the cells of a module that does not import
// (python/portcheck_worker/protocol.schema.json defines each). The types are vocabulary, here in
// core/ where every layer that uses them (check/, export/) sees them; reading one is the
// protocol's check and lives beside it (run/cell_answer_read.hpp: the schema's check and the
// conversion in one place). message() is the answer again, as the result cache stores it.
// tests/unit/worker_answers_test.cpp holds the types to the schema: every member it defines is
// read.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/cell.hpp"
#include "src/core/kernel_facts.hpp"

namespace portcheck {

// One cell's answer, of whichever of the four messages `kind` names. Each member says which of
// them carry it; a member a message does not define stays empty.
struct CellAnswer {
  std::string kind;  // compile_result, repro_answer, reproducer_result or cell_failure
  bool ok = false;   // status: "ok" or "error"

  // A failure (all four): the stage that raised and what it raised.
  std::string stage;
  std::optional<FailureError> error;
  std::optional<SourceLocation> error_source;  // compile_result, cell_failure
  std::optional<AutotunerAnswer> autotuner;    // compile_result, cell_failure

  // A compile, failed or not (compile_result, cell_failure, repro_answer's failure).
  std::map<std::string, double> stages;  // seconds by stage
  std::optional<double> compile_s;
  std::optional<SourceLocation> source;  // the kernel's def; null and absent alike
  std::optional<std::string> ttir_key;   // null and absent alike
  std::optional<std::string> shared_with;
  std::optional<std::vector<std::string>> saved_ir;

  // A compiled kernel (compile_result; a reproducer_result has metadata, resources and launch).
  std::optional<KernelMetadata> metadata;
  std::optional<std::map<std::string, std::uint64_t>> sizes;
  std::optional<KernelResources> resources;
  std::optional<LaunchVerdict> launch;
  std::optional<ExportFiles> exported;
  struct OutputError {
    std::string path;
    std::string error;
  };
  std::optional<OutputError> output_error;

  std::optional<ReproducerText> repro;        // repro_answer's "ok"
  std::optional<std::string> triton_version;  // reproducer_result

  // The message again, as the worker wrote it (less the nulls that read as absent).
  [[nodiscard]] nlohmann::json message() const;
};

// `message`, a `kind` (compile_result, repro_answer, reproducer_result or cell_failure) the
// protocol's schema has checked, converted. Only the readers that made that check call it, right
// after it (run/cell_answer_read.hpp; run/inspect_answer.hpp for the failure an inspect_answer
// carries): on anything else it may throw nlohmann's exceptions.
[[nodiscard]] CellAnswer convert_checked_answer(std::string_view kind,
                                                const nlohmann::json& message);

}  // namespace portcheck
