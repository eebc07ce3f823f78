#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "src/core/cell.hpp"
#include "src/core/target.hpp"

namespace portcheck {

// The C type a kernel parameter of Triton type `triton_type` takes in the binary's parameter
// buffer: CUdeviceptr/hipDeviceptr_t for pointers, fixed-width integers, float/double, and
// uint16_t (raw bits) for fp16/bf16 scalars.
std::string c_type_for(const std::string& triton_type, Backend backend);

// Everything needed to launch an exported cell from C/C++ (docs/export.md): entry symbol, block
// size, dynamic shared memory and whether it needs the opt-in attribute, clusters, scratch
// buffers, and the binary's exact parameter list with what was folded away.
nlohmann::ordered_json launch_descriptor(const CellResult& cell);

// The parameters the PTX .entry declares, to check a descriptor against; nullopt when the text
// holds no entry of that name.
std::optional<std::size_t> ptx_parameter_count(const std::string& ptx, const std::string& entry);

// Writes launch.json and the C++ launcher header beside the binary the worker exported. Returns
// the files written; throws EnvironmentError when the descriptor disagrees with the PTX.
std::vector<std::string> write_export(const CellResult& cell);

}  // namespace portcheck
