#pragma once
// The device catalog: built-in types from resources/devices.json (embedded at build time),
// optionally overridden or extended by a user file. Look-ups are case-insensitive and
// accept aliases ("h800", "NVIDIA H800 SXM", "910b" -> "910B-376T").

#include "hardware/DeviceType.h"
#include "util/InputError.h"

#include <string>
#include <string_view>
#include <vector>

namespace hapmoe {

// The least rate (TFLOP/s, GB/s, Gbit/s, efficiency) a device catalog or a cluster may give,
// a million times below the slowest device: below it a time is no longer a finite number of
// seconds (a 1 GB transfer over 1e-320 GB/s).
inline constexpr double kMinRate = 1e-6;
// The largest rate a cluster may give a link, a NIC or a host link (GB/s or Gbit/s), about a
// thousand times above today's fastest: above it a rate times 1e9 bytes can overflow to
// infinity (1e308 GB/s) and print as "inf".
inline constexpr double kMaxRate = 1e6;
// The largest rate of a cluster's link: a switch's link carries what every device below it
// sends (a spine over 20,000 GPUs of 50 GB/s NICs takes 1e6 GB/s), so a per-device bound
// does not fit it; 1e9 GB/s is a million devices at a thousand GB/s each.
inline constexpr double kMaxLinkRate = 1e9;

class DeviceCatalog {
public:
    DeviceCatalog() = default;
    // A catalog built in code, taken as given: fromJson's checks (unique names, bounded
    // figures, one-line text) are the caller's to keep.
    explicit DeviceCatalog(std::vector<DeviceType> types) : m_types(std::move(types)) {}

    // The catalog shipped in resources/devices.json.
    static const DeviceCatalog& builtin();

    // Parses a catalog document (format "hapmoe.devices"). Throws InputError naming
    // fileName and the JSON path of a bad field.
    static DeviceCatalog fromJson(std::string_view text, const std::string& fileName, Warnings* warnings = nullptr);

    // Adds types from another catalog, or replaces the type its name names (our name, in any
    // case or spelling normalizedName takes as the same; the type keeps our spelling, and our
    // hbm_efficiency when the other gives none). A name that is another type's alias throws
    // InputError(fileName, "devices[i].name", ...); an alias of the other catalog may not name
    // a type it does not replace: InputError(fileName, "devices[i].aliases", ...), since the
    // alias would shadow it.
    void merge(const DeviceCatalog& overrides, const std::string& fileName = {});

    const DeviceType* find(std::string_view nameOrAlias) const;
    // Like find, but throws InputError("", where, "unknown device type ...; known: ...").
    const DeviceType& get(std::string_view nameOrAlias, const std::string& where = {}) const;

    // The catalog's name for a type name or alias, or the name itself when the catalog does
    // not know it; and whether two names denote the same type through it, without regard to
    // case (a stage's type against its nodes', a FlagScale mesh label against a node's).
    std::string canonicalName(const std::string& nameOrAlias) const;
    bool sameType(const std::string& a, const std::string& b) const;

    const std::vector<DeviceType>& types() const { return m_types; }

    // The catalog as a "hapmoe.devices" document that fromJson reads back to the same types
    // (hapmoe presets devices --json).
    std::string toJson() const;

private:
    std::vector<DeviceType> m_types;
};

} // namespace hapmoe
