#pragma once
// The shape of a manifest row's `specialization`: the JSON text Triton's
// serialize_specialization_data writes. Checked when the manifest is read, so that valid JSON of
// another shape ('[1,2,3]') is the user's error with its line, not a worker failing on it.
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace portcheck {

// Empty when `spec` has the shape the worker reads; else what is wrong, as the end of a message
// that starts with the manifest's file, line and key.
std::string specialization_shape_problem(const nlohmann::json& spec);

}  // namespace portcheck
