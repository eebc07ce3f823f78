#include "src/check/plan.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "src/check/autotuned_launches.hpp"
#include "src/check/reduce.hpp"
#include "src/check/worker_targets.hpp"
#include "src/check/zygote_key.hpp"
#include "src/core/cell_folders.hpp"
#include "src/core/shard.hpp"
#include "util/strings.hpp"

namespace portcheck {
namespace {

// Names were validated by run_check (or the manifest loader) before anything is planned.
Target target_named(const std::string& name) { return checked_target(name); }

nlohmann::json cell_request(const KernelRow& row, const Target& target, const CheckOptions& options,
                            const std::string& label) {
  nlohmann::json request;
  // A cell of `repro` asks for its reproducer instead of its compile (protocol.schema.json).
  const auto repro = options.repro.find({row.display_name(), target.name()});
  const bool writes_reproducer = repro != options.repro.end();
  request["kind"] = writes_reproducer ? "repro" : "compile";
  request["kernel"] = kernel_ref_json(row.ref);
  request["row_name"] = row.display_name();
  request["signature"] = row.signature;
  request["constants"] = row.constants;
  request["options"] = row.options;
  if (row.specialization) request["specialization"] = nlohmann::json::parse(*row.specialization);
  request["target"] = nlohmann::json(target);
  request["zygote"] = zygote_member(row.ref, target.name());
  const auto row_folder = ir_row_folder(row.display_name());
  const auto target_folder = ir_target_folder(target.name());
  if (options.save_ir_dir && !writes_reproducer)
    request["save_ir_dir"] =
        std::filesystem::absolute(*options.save_ir_dir / label / row_folder / target_folder)
            .string();
  if (writes_reproducer) request["repro"] = repro->second;
  if (options.export_dir && !writes_reproducer)
    request["export_dir"] =
        std::filesystem::absolute(*options.export_dir / row_folder / target_folder).string();
  return request;
}

// Costs from the manifest alone (never local timings), so every runner draws the same parts. The
// configs of an autotuned launch on one target are one part's (their verdict is the launch's).
std::vector<PlannedCell> shard_of(std::vector<PlannedCell> cells, const Manifest& manifest,
                                  const ShardInfo& shard) {
  const auto companions = autotune_companions(manifest);
  std::map<std::string, std::size_t> unit_of;  // the first row of the group | target -> unit
  std::vector<double> costs;
  std::vector<std::string> keys;
  std::vector<std::vector<std::size_t>> members;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto row = static_cast<std::size_t>(cells[i].row - manifest.rows.data());
    const auto key = manifest.rows[companions[row]].display_name() + "|" + cells[i].target.name();
    const auto [it, added] = unit_of.emplace(key, costs.size());
    if (added) {
      costs.push_back(0);
      keys.push_back(key);
      members.emplace_back();
    }
    costs[it->second] += cells[i].expected_s;
    members[it->second].push_back(i);
  }
  std::vector<PlannedCell> mine;
  for (const auto unit : select_shard(costs, keys, shard))
    for (const auto i : members[unit]) mine.push_back(std::move(cells[i]));
  std::sort(mine.begin(), mine.end(),
            [](const PlannedCell& a, const PlannedCell& b) { return a.index < b.index; });
  return mine;
}

// Which rows are one kernel for the vendors: the function they compile; for a module generated
// at run time, its name alone, since each vendor's run generates its own file (torch.compile
// writes `triton_mm` candidates and `triton_poi_fused_..._0` anew for AMD).
std::string vendor_key(const KernelRow& row) {
  if (!row.ref.file.empty() && row.ref.file.parent_path().filename() == kGeneratedFolder)
    return "generated:" + row.ref.function;
  return row.ref.spelled();
}

}  // namespace

CapturedVendors captured_vendors(const Manifest& manifest) {
  CapturedVendors vendors;
  for (const auto& row : manifest.rows)
    for (const auto& name : row.captured_as)
      vendors[vendor_key(row)].insert(target_named(name).backend);
  return vendors;
}

PersonaFit persona_fit(const KernelRow& row, const Target& target, const CapturedVendors& vendors) {
  if (row.captured_as.empty() ||
      std::any_of(row.captured_as.begin(), row.captured_as.end(),
                  [&](const auto& name) { return target_named(name).backend == target.backend; }))
    return PersonaFit::own;
  const auto kernel = vendors.find(vendor_key(row));
  return kernel != vendors.end() && kernel->second.count(target.backend) != 0
             ? PersonaFit::other_rows
             : PersonaFit::foreign;
}

Matrix plan_matrix(const Manifest& manifest, const std::vector<std::string>& cli_targets,
                   std::string_view manifest_text) {
  Matrix matrix;
  matrix.target_names = cli_targets.empty() ? manifest.targets : cli_targets;
  matrix.targets_from_flag = !cli_targets.empty();
  matrix.vendors = captured_vendors(manifest);
  for (const auto& row : manifest.rows) {
    // A row's own `targets` narrows the run; --targets always wins.
    const auto& asked =
        !cli_targets.empty() || row.targets.empty() ? matrix.target_names : row.targets;
    std::vector<std::string> names;
    std::copy_if(asked.begin(), asked.end(), std::back_inserter(names), [&](const auto& name) {
      return persona_fit(row, target_named(name), matrix.vendors) != PersonaFit::other_rows;
    });
    matrix.row_targets[row.display_name()] = names;
    for (const auto& name : names)
      if (std::find(matrix.columns.begin(), matrix.columns.end(), name) == matrix.columns.end())
        matrix.columns.push_back(name);
  }
  // The matrix's identity: the manifest's text, the columns and the targets asked for.
  matrix.digest =
      util::sha1_hex(fmt::format("{}\n{}\n{}", manifest_text, util::join(matrix.columns, ","),
                                 util::join(matrix.target_names, ",")))
          .substr(0, 16);
  return matrix;
}

std::vector<PlannedCell> plan_cells(const Manifest& manifest, const Matrix& matrix,
                                    const CheckOptions& options, const std::string& label) {
  std::vector<PlannedCell> cells;
  for (const auto& row : manifest.rows) {
    for (const auto& name : matrix.row_targets.at(row.display_name())) {
      // A run of reproducers has only their cells (the rows' other targets compiled before).
      if (!options.repro.empty() && !options.repro.contains({row.display_name(), name})) continue;
      PlannedCell cell;
      cell.row = &row;
      cell.target = target_named(name);
      cell.index = cells.size();
      cell.request = cell_request(row, cell.target, options, label);
      cell.timeout_s = options.timeout_s.value_or(row.timeout_s.value_or(manifest.timeout_s));
      cell.max_rss =
          options.max_rss_bytes.value_or(row.max_rss_bytes.value_or(manifest.max_rss_bytes));
      cell.expected_s = expected_seconds(row, cell.target);
      cell.label = label;
      if (persona_fit(row, cell.target, matrix.vendors) == PersonaFit::foreign)
        cell.host_choices_of = row.captured_as;
      cells.push_back(std::move(cell));
    }
  }
  return options.shard ? shard_of(std::move(cells), manifest, *options.shard) : cells;
}

Plan plan_environment(const Manifest& manifest, const Matrix& matrix, const CheckOptions& options,
                      const std::string& label) {
  Plan plan;
  plan.label = label;
  plan.cells = plan_cells(manifest, matrix, options, label);
  if (options.reduce) {
    plan.representative = representatives(plan.cells);
  } else {
    plan.representative.resize(plan.cells.size());
    for (std::size_t id = 0; id < plan.cells.size(); ++id) plan.representative[id] = id;
  }
  plan.probe_request = {{"tool_version", PORTCHECK_VERSION},
                        {"targets", targets_json(matrix.columns)}};
  plan.warm_targets = warm_up_targets(matrix.columns);
  return plan;
}

double expected_seconds(const KernelRow& row, const Target& target) {
  // AMD's pipeline is the slower one here.
  double product = 1;
  for (const auto& [name, value] : row.constants.items())
    if (value.is_number_integer() && value.get<long long>() > 1)
      product *= static_cast<double>(value.get<long long>());
  const double stages = row.options.contains("num_stages") && row.options["num_stages"].is_number()
                            ? row.options["num_stages"].get<double>()
                            : 3.0;
  return (1.0 + std::log2(product) / 8.0) * (1.0 + stages / 6.0) *
         (target.backend == Backend::hip ? 1.2 : 1.0);
}

void PlannedCell::seal() {
  kind = request.value("kind", "");
  request_text = request.dump();
  request = nlohmann::json();
}

std::string PlannedCell::request_json() const {
  auto text = request_text.empty() ? request.dump() : request_text;
  if (!launch_limits) return text;
  // The dump of an object ends in its closing brace: the member goes in before it.
  text.insert(text.size() - 1,
              fmt::format(R"({}"launch_limits":{})", text == "{}" ? "" : ",", *launch_limits));
  return text;
}

std::string PlannedCell::request_kind() const {
  return request_text.empty() ? request.value("kind", "") : kind;
}

nlohmann::json PlannedCell::parsed_request() const { return nlohmann::json::parse(request_json()); }

}  // namespace portcheck
