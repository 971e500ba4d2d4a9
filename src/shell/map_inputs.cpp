#include "shell/map_inputs.h"

#include <string>
#include <utility>

#include "util/base64.h"

namespace gantry::shell {

Json map_inputs_to_json(const MapInputs& inputs) {
    Json files = Json::array();
    for (const auto& [path, file] : inputs.files)
        files.push_back(file.unreadable
                            ? Json{{"path", path}, {"unreadable", *file.unreadable}}
                            : Json{{"path", path}, {"base64", base64_encode(file.text)}});
    return {{"hostname", inputs.hostname}, {"names", inputs.names}, {"files", std::move(files)}};
}

namespace {

Error map_inputs_error(const std::string& what) {
    return Error("map_inputs", what);
}

// The member `name` of `object` when `is_kind` says it is of that kind
// (`kind`: "a string", "an array"), or why not.
Result<const Json*> member(const Json& object, const std::string& name, const std::string& where,
                           bool (Json::*is_kind)() const noexcept, const std::string& kind) {
    const auto found = object.find(name);
    if (found == object.end() || !((*found).*is_kind)())
        return map_inputs_error(where + "\"" + name + "\": expected " + kind + ", not " +
                                json_type_name(found == object.end() ? Json() : *found));
    return &*found;
}

Result<std::string> string_member(const Json& object, const std::string& name,
                                  const std::string& where) {
    auto found = member(object, name, where, &Json::is_string, "a string");
    if (!found)
        return found.error();
    return (*found)->get<std::string>();
}

Result<FileText> file_text_of(const Json& entry, const std::string& where) {
    const auto wrong = [&where] {
        return map_inputs_error(where + R"(: expected {"path":TEXT,"base64":TEXT} or )"
                                        R"({"path":TEXT,"unreadable":TEXT})");
    };
    if (!entry.is_object() || entry.size() != 2 || !entry.contains("path"))
        return wrong();
    if (const auto unreadable = entry.find("unreadable"); unreadable != entry.end()) {
        if (!unreadable->is_string())
            return wrong();
        return FileText{{}, unreadable->get<std::string>()};
    }
    const auto encoded = entry.find("base64");
    if (encoded == entry.end() || !encoded->is_string())
        return wrong();
    auto text = base64_decode(encoded->get<std::string>());
    if (!text)
        return map_inputs_error(where + ".base64: " + text.error().str());
    return FileText{std::move(*text), std::nullopt};
}

}  // namespace

Result<MapInputs> map_inputs_from_json(const Json& json) {
    if (!json.is_object())
        return map_inputs_error("expected an object, not " + json_type_name(json));
    MapInputs inputs;
    auto hostname = string_member(json, "hostname", "");
    if (!hostname)
        return hostname.error();
    inputs.hostname = std::move(*hostname);
    const auto names = member(json, "names", "", &Json::is_array, "an array");
    if (!names)
        return names.error();
    for (const Json& name : **names) {
        if (!name.is_string())
            return map_inputs_error("\"names\": expected strings, found " + json_type_name(name));
        inputs.names.push_back(name.get<std::string>());
    }
    const auto files = member(json, "files", "", &Json::is_array, "an array");
    if (!files)
        return files.error();
    for (std::size_t k = 0; k < (*files)->size(); ++k) {
        const std::string where = "\"files\"[" + std::to_string(k) + "]";
        const Json& entry = (**files)[k];
        auto text = file_text_of(entry, where);
        if (!text)
            return text.error();
        auto path = string_member(entry, "path", where + ".");
        if (!path)
            return path.error();
        inputs.files.insert_or_assign(std::move(*path), std::move(*text));
    }
    return inputs;
}

}  // namespace gantry::shell
