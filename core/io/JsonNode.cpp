#include "io/JsonNode.h"

#include "util/Strings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace hapmoe::io {

namespace {

std::string formatNumber(double v)
{
    std::ostringstream os;
    os << v;
    return os.str();
}

// "line L, column C" of a byte offset (columns count bytes, as the parse errors do).
std::string lineAndColumn(std::string_view text, std::size_t offset)
{
    const auto before = text.substr(0, std::min(offset, text.size()));
    const auto line = 1 + std::count(before.begin(), before.end(), '\n');
    const auto nl = before.rfind('\n');
    const auto column = before.size() - (nl == std::string_view::npos ? 0 : nl + 1) + 1;
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// The byte offset of the first occurrence of a number's text as a value, outside every string
// ("see 1e-9999 here" in a description is not the number); npos when there is none.
std::size_t numberOffset(std::string_view text, std::string_view token)
{
    bool inString = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (text.compare(i, token.size(), token) == 0 && (i == 0 || std::string_view(":[, \t\r\n").find(text[i - 1]) != std::string_view::npos)) {
            return i;
        }
    }
    return std::string_view::npos;
}

// The byte offset of the opening quote of the index-th object key (0-based, in document
// order) of a text nlohmann has parsed: a string followed by ':' is a key.
std::size_t keyOffset(std::string_view text, std::size_t index)
{
    std::size_t seen = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '"')
            continue;
        const std::size_t open = i;
        for (++i; i < text.size() && text[i] != '"'; ++i)
            if (text[i] == '\\')
                ++i;
        std::size_t next = i + 1;
        while (next < text.size() && (text[next] == ' ' || text[next] == '\t' || text[next] == '\n' || text[next] == '\r'))
            ++next;
        if (next < text.size() && text[next] == ':' && seen++ == index)
            return open;
    }
    return std::string_view::npos;
}

// Where the text stops being a JSON text at all: a NUL byte anywhere (nlohmann reads it as
// the end of the input), or a control character where the first value should start.
// Values, keys and containers a document may hold: past it the reading stops. A document of
// millions of values is no hapmoe document, and its tree would take some 50 bytes of memory
// per value (a 250 MiB array of zeros took 6.3 GB before this bound).
constexpr std::size_t kMaxJsonValues = 5'000'000;
// Containers inside containers: a hapmoe document nests a handful deep (a plan's search
// alternatives' stage predictions are the deepest, under ten). Copies and comparisons of a
// JSON value recurse, so a value nested thousands deep would exhaust the stack.
constexpr std::size_t kMaxJsonDepth = 256;

std::size_t binaryOffset(std::string_view text)
{
    if (const auto nul = text.find('\0'); nul != std::string_view::npos)
        return nul;
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos
        && (static_cast<unsigned char>(text[first]) < 0x20 || static_cast<unsigned char>(text[first]) == 0x7f))
        return first;
    return std::string_view::npos;
}


// Letters and digits of a key, lower-cased: "numExperts", "num-experts" and "num_experts" are
// the same key written three ways.
std::string keyLetters(std::string_view key)
{
    std::string out;
    for (char c : key)
        if (std::isalnum(static_cast<unsigned char>(c)))
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Edits (insert, delete, replace, swap of two neighbours) between a and b, or limit + 1 when
// it is more than limit.
std::size_t keyEdits(std::string_view a, std::string_view b, std::size_t limit)
{
    const std::size_t n = a.size(), m = b.size();
    if ((n > m ? n - m : m - n) > limit)
        return limit + 1;
    std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
    for (std::size_t i = 0; i <= n; ++i)
        d[i][0] = i;
    for (std::size_t j = 0; j <= m; ++j)
        d[0][j] = j;
    for (std::size_t i = 1; i <= n; ++i)
        for (std::size_t j = 1; j <= m; ++j) {
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return std::min(d[n][m], limit + 1);
}

// The known key an unknown one was most likely meant to be: the same letters written another
// way, one edit away (two for keys of eight letters or more), or the known key cut short
// before one of its words ("moe_ffn_hidden" for "moe_ffn_hidden_size"). Empty when none is.
std::string_view nearKey(std::string_view key, std::initializer_list<std::string_view> known)
{
    const std::string letters = keyLetters(key);
    std::string_view best;
    std::size_t bestEdits = 3;
    for (std::string_view k : known) {
        if (letters == keyLetters(k))
            return k;
        const std::size_t limit = k.size() >= 8 ? 2 : (k.size() >= 4 ? 1 : 0);
        if (limit > 0) {
            const std::size_t edits = keyEdits(key, k, limit);
            if (edits <= limit && edits < bestEdits) {
                best = k;
                bestEdits = edits;
            }
        }
        if (best.empty() && key.size() >= 6 && k.size() > key.size() && k.compare(0, key.size(), key) == 0
            && k[key.size()] == '_')
            best = k;
    }
    return best;
}
} // namespace

JsonNode::JsonNode(const nlohmann::json& value, std::string path, const JsonContext& context)
    : m_value(&value)
    , m_path(std::move(path))
    , m_context(&context)
{
}

nlohmann::json JsonNode::parse(std::string_view text, const std::string& file)
{
    // A key given twice in one object would silently keep the last value; refuse it.
    // A SAX handler builds the document (nlohmann's DOM parser) and watches the keys; unlike
    // nlohmann's parse callback, which scans the enclosing container after every object, it
    // reads an array of n objects in linear time.
    class Reader : public nlohmann::json_sax<nlohmann::json> {
    public:
        explicit Reader(nlohmann::json& doc) : m_dom(doc) {}
        bool null() override { return value() && m_dom.null(); }
        bool boolean(bool v) override { return value() && m_dom.boolean(v); }
        bool number_integer(number_integer_t v) override { return value() && m_dom.number_integer(v); }
        bool number_unsigned(number_unsigned_t v) override { return value() && m_dom.number_unsigned(v); }
        bool number_float(number_float_t v, const string_t& s) override
        {
            // Too small for a double ("1e-9999"): it would read as 0, a value the text does not
            // say (an integer field would take it as 0). Refused, as one too large is.
            if (v == 0 && underflow.empty() && s.substr(0, s.find_first_of("eE")).find_first_of("123456789") != std::string::npos)
                underflow = s;
            return value() && m_dom.number_float(v, s);
        }
        bool string(string_t& v) override { return value() && m_dom.string(v); }
        bool binary(binary_t& v) override { return value() && m_dom.binary(v); }
        bool start_object(std::size_t n) override { return counted() && open() && m_dom.start_object(n); }
        bool start_array(std::size_t n) override { return counted() && open() && m_dom.start_array(n); }
        bool end_object() override { close(); return m_dom.end_object(); }
        bool end_array() override { close(); return m_dom.end_array(); }
        bool key(string_t& k) override
        {
            if (!counted())
                return false;
            m_lastKey = k;
            ++m_keyCount;
            if (!m_keys.empty() && duplicate.empty() && !m_keys.back().insert(k).second) {
                duplicate = k;
                duplicateIndex = m_keyCount - 1;
                for (std::size_t i = m_path.size(); i-- > 1;)
                    if (!m_path[i].empty()) {
                        duplicate += "\" in \"" + m_path[i];
                        break;
                    }
            }
            return m_dom.key(k);
        }
        // Rethrown as its own type (a parse error, or a number beyond a double), which the
        // caller turns into a message with the line and column.
        bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override
        {
            if (const auto* p = dynamic_cast<const nlohmann::json::parse_error*>(&e))
                throw *p;
            if (const auto* r = dynamic_cast<const nlohmann::json::out_of_range*>(&e))
                throw *r;
            throw nlohmann::json::other_error::create(501, e.what(), nullptr);
        }

        std::string underflow;              // the first number too small for a double, as written
        std::string duplicate;              // the repeated key, and the key of its object
        std::size_t duplicateIndex = 0;     // which key event repeated
        bool tooMany = false;   // more than kMaxJsonValues
        bool tooDeep = false;   // containers nested more than kMaxJsonDepth deep

    private:
        bool counted()
        {
            tooMany = tooMany || ++m_values > kMaxJsonValues;
            return !tooMany;
        }
        bool value()
        {
            m_lastKey.clear();
            return counted();
        }
        bool open()
        {
            if (m_keys.size() >= kMaxJsonDepth) {
                tooDeep = true;
                return false;
            }
            m_keys.emplace_back();
            m_path.push_back(m_lastKey);
            m_lastKey.clear();
            return true;
        }
        void close()
        {
            if (!m_keys.empty()) {
                m_keys.pop_back();
                m_path.pop_back();
            }
        }

        nlohmann::detail::json_sax_dom_parser<nlohmann::json> m_dom;
        // m_keys[i] holds the keys seen so far in the i-th open object or array (arrays stay
        // empty); a set, so that an object with many keys is read in n log n, not n^2.
        std::vector<std::set<std::string>> m_keys;
        std::vector<std::string> m_path;   // the key each open container was reached by
        std::string m_lastKey;
        std::size_t m_keyCount = 0;
        std::size_t m_values = 0;
    };
    if (const auto at = binaryOffset(text); at != std::string_view::npos)
        throw InputError(file, lineAndColumn(text, at),
                         "malformed JSON: not a JSON text (binary data at byte " + std::to_string(at) + ")");
    try {
        nlohmann::json doc;
        Reader reader(doc);
        nlohmann::json::sax_parse(text.begin(), text.end(), &reader);
        if (reader.tooDeep)
            throw InputError(file, "", "the document nests arrays and objects more than " + std::to_string(kMaxJsonDepth)
                                           + " deep; a hapmoe document nests a few: expected a model, cluster, profile, plan or project");
        if (reader.tooMany)
            throw InputError(file, "", "the document holds more than " + std::to_string(kMaxJsonValues / 1'000'000)
                                           + " million JSON values; a hapmoe document holds far fewer: expected a model, "
                                             "cluster, profile, plan or project");
        if (!reader.underflow.empty()) {
            const auto at = numberOffset(text, reader.underflow);
            throw InputError(file, at == std::string_view::npos ? std::string() : lineAndColumn(text, at),
                             "malformed JSON: the number " + reader.underflow
                                 + " is too small for a double (it would read as 0); write 0 if 0 is meant");
        }
        if (!reader.duplicate.empty()) {
            const auto at = keyOffset(text, reader.duplicateIndex);
            throw InputError(file, at == std::string_view::npos ? std::string() : lineAndColumn(text, at),
                             "malformed JSON: the key \"" + reader.duplicate + "\" appears twice in one object");
        }
        return doc;
    } catch (const nlohmann::json::out_of_range& e) {
        // A number beyond a double ("1e999"): nlohmann names the token but not where it is.
        std::string what = e.what();
        std::string token;
        if (auto a = what.find("parsing '"); a != std::string::npos)
            if (auto b = what.find('\'', a + 9); b != std::string::npos)
                token = what.substr(a + 9, b - a - 9);
        std::string where;
        if (const auto at = token.empty() ? std::string_view::npos : numberOffset(text, token); at != std::string_view::npos) {
            const auto before = text.substr(0, at);
            const auto line = 1 + std::count(before.begin(), before.end(), '\n');
            const auto nl = before.rfind('\n');
            const auto column = at - (nl == std::string_view::npos ? 0 : nl + 1) + 1;
            where = "line " + std::to_string(line) + ", column " + std::to_string(column);
        }
        throw InputError(file, where, "malformed JSON: the number " + (token.empty() ? std::string("") : token + " ")
                                          + "is beyond the range of a double");
    } catch (const nlohmann::json::parse_error& e) {
        // nlohmann reports a byte offset; count lines and columns ourselves so the message
        // points where an editor would.
        const std::size_t upto = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
        int line = 1;
        int column = 1;
        for (std::size_t i = 0; i < upto; ++i) {
            if (text[i] == '\n') {
                ++line;
                column = 1;
            } else {
                ++column;
            }
        }
        std::string what = e.what();
        // Keep nlohmann's explanation, drop its "[json.exception...] parse error at ...:" prefix.
        if (auto pos = what.find(": "); pos != std::string::npos && what.find("parse error") != std::string::npos)
            what = what.substr(pos + 2);
        // nlohmann quotes everything it read of the current token; a long string would
        // swamp the message.
        if (auto last = what.find("; last read: '"); last != std::string::npos && what.size() - last > 60)
            what = what.substr(0, last + 50) + "...'";
        if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
            what = "the file is empty";
        // A launch script given where a document is expected (hapmoe validate train.sh).
        else if (const std::size_t first = text.find_first_not_of(" \t\r\n"); text.compare(first, 1, "#") == 0)
            what += "; the file starts with '#', as a shell script does: `hapmoe import FILE` reads a Megatron-LM or "
                    "FlagScale launch script (estimate and plan take one as --script FILE)";
        throw InputError(file, "line " + std::to_string(line) + ", column " + std::to_string(column),
                         "malformed JSON: " + what);
    }
}

std::string JsonNode::describe(const nlohmann::json& value)
{
    std::string s;
    switch (value.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::boolean: return value.get<bool>() ? "true" : "false";
    default: s = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); break;
    }
    if (s.size() > 60)
        s = s.substr(0, 57) + "...";
    return s;
}

std::string JsonNode::normalizedName(std::string_view name)
{
    std::string out;
    out.reserve(name.size());
    for (char c : name) {
        if (c == '-' || c == '_' || c == ' ' || c == '\t')
            continue;
        out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
    return out;
}

std::string JsonNode::childPath(std::string_view key) const
{
    if (m_path.empty())
        return std::string(key);
    return m_path + "." + std::string(key);
}

std::string JsonNode::indexPath(std::size_t index) const
{
    return (m_path.empty() ? std::string("document") : m_path) + "[" + std::to_string(index) + "]";
}

void JsonNode::requireObject() const
{
    if (!m_value->is_object())
        failHere("expected an object, got " + describe(*m_value));
}

const nlohmann::json* JsonNode::member(std::string_view key) const
{
    if (!m_value->is_object())
        return nullptr;
    auto it = m_value->find(key);
    if (it == m_value->end() || it->is_null())
        return nullptr;
    return &*it;
}

bool JsonNode::has(std::string_view key) const { return member(key) != nullptr; }

JsonNode JsonNode::child(std::string_view key) const
{
    requireObject();
    const auto* v = member(key);
    if (!v)
        fail(key, m_value->contains(key) ? "expected a value, got null" : "missing required key");
    return JsonNode(*v, childPath(key), *m_context);
}

std::optional<JsonNode> JsonNode::optChild(std::string_view key) const
{
    const auto* v = member(key);
    if (!v)
        return std::nullopt;
    return JsonNode(*v, childPath(key), *m_context);
}

JsonNode JsonNode::object(std::string_view key) const
{
    JsonNode n = child(key);
    n.requireObject();
    return n;
}

std::optional<JsonNode> JsonNode::optObject(std::string_view key) const
{
    auto n = optChild(key);
    if (n)
        n->requireObject();
    return n;
}

std::vector<JsonNode> JsonNode::array(std::string_view key, bool required) const
{
    requireObject();
    const auto* v = member(key);
    if (!v) {
        if (required)
            fail(key, m_value->contains(key) ? "expected an array, got null" : "missing required key (expected an array)");
        return {};
    }
    JsonNode n(*v, childPath(key), *m_context);
    return n.elements();
}

std::vector<JsonNode> JsonNode::elements() const
{
    if (!m_value->is_array())
        failHere("expected an array, got " + describe(*m_value));
    std::vector<JsonNode> out;
    out.reserve(m_value->size());
    for (std::size_t i = 0; i < m_value->size(); ++i)
        out.emplace_back((*m_value)[i], indexPath(i), *m_context);
    return out;
}

std::string JsonNode::expectedInteger(long long min, long long max)
{
    if (min == 1 && max >= INT_MAX)
        return "a positive integer";
    if (min == 0 && max >= INT_MAX)
        return "a non-negative integer";
    if (min <= INT_MIN && max >= INT_MAX)
        return "an integer";
    if (max >= INT_MAX)
        return "an integer >= " + std::to_string(min);
    return "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

long long JsonNode::integerOf(const nlohmann::json& v, const std::string& path, long long min, long long max) const
{
    long long value = 0;
    bool ok = false;
    if (v.is_number_integer()) {
        if (v.is_number_unsigned() && v.get<unsigned long long>() > static_cast<unsigned long long>(std::numeric_limits<long long>::max()))
            ok = false;
        else {
            value = v.get<long long>();
            ok = true;
        }
    } else if (v.is_number_float()) {
        // 8.0 is accepted as 8; 8.5 and out-of-range values are not integers.
        const double d = v.get<double>();
        if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9.0e15) {
            value = static_cast<long long>(d);
            ok = true;
        }
    }
    if (ok && value > max && max >= INT_MAX)   // a whole number, but beyond what the field holds
        throw InputError(m_context->file, path,
                         "expected " + expectedInteger(min, max) + " of at most " + std::to_string(max) + ", got " + describe(v));
    if (!ok || value < min || value > max)
        throw InputError(m_context->file, path, "expected " + expectedInteger(min, max) + ", got " + describe(v));
    return value;
}

double JsonNode::numberOf(const nlohmann::json& v, const std::string& path, double min, bool minExclusive, double max) const
{
    auto expected = [&] {
        if (min == 0 && minExclusive && std::isinf(max))
            return std::string("a positive number");
        if (min == 0 && minExclusive)
            return "a positive number up to " + formatNumber(max);
        if (min == 0 && !minExclusive && std::isinf(max))
            return std::string("a non-negative number");
        if (std::isinf(min) && std::isinf(max))
            return std::string("a number");
        std::string s = "a number";
        if (!std::isinf(min))
            s += (minExclusive ? " > " : " >= ") + formatNumber(min);
        if (!std::isinf(max))
            s += (std::isinf(min) ? " <= " : " and <= ") + formatNumber(max);
        return s;
    };
    if (!v.is_number())
        throw InputError(m_context->file, path, "expected " + expected() + ", got " + describe(v));
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < min || (minExclusive && d == min) || d > max)
        throw InputError(m_context->file, path, "expected " + expected() + ", got " + describe(v));
    return d;
}

int JsonNode::reqInt(std::string_view key, int min, int max) const
{
    const JsonNode n = child(key);
    return static_cast<int>(integerOf(n.value(), n.path(), min, max));
}

int JsonNode::optInt(std::string_view key, int fallback, int min, int max) const
{
    const auto* v = member(key);
    return v ? static_cast<int>(integerOf(*v, childPath(key), min, max)) : fallback;
}

long long JsonNode::reqInt64(std::string_view key, long long min) const
{
    const JsonNode n = child(key);
    return integerOf(n.value(), n.path(), min, std::numeric_limits<long long>::max());
}

long long JsonNode::optInt64(std::string_view key, long long fallback, long long min) const
{
    const auto* v = member(key);
    return v ? integerOf(*v, childPath(key), min, std::numeric_limits<long long>::max()) : fallback;
}

double JsonNode::reqDouble(std::string_view key, double min, bool minExclusive, double max) const
{
    const JsonNode n = child(key);
    return numberOf(n.value(), n.path(), min, minExclusive, max);
}

double JsonNode::optDouble(std::string_view key, double fallback, double min, bool minExclusive, double max) const
{
    const auto* v = member(key);
    return v ? numberOf(*v, childPath(key), min, minExclusive, max) : fallback;
}

bool JsonNode::optBool(std::string_view key, bool fallback) const
{
    const auto* v = member(key);
    if (!v)
        return fallback;
    if (!v->is_boolean())
        fail(key, "expected true or false, got " + describe(*v));
    return v->get<bool>();
}

std::string JsonNode::reqString(std::string_view key, bool nonEmpty) const
{
    const JsonNode n = child(key);
    if (!n.value().is_string())
        fail(key, "expected a string, got " + describe(n.value()));
    std::string s = n.value().get<std::string>();
    if (nonEmpty && s.empty())
        fail(key, "expected a non-empty string");
    return s;
}

std::string JsonNode::optRawString(std::string_view key, const std::string& fallback) const
{
    const auto* v = member(key);
    if (!v)
        return fallback;
    if (!v->is_string())
        fail(key, "expected a string, got " + describe(*v));
    return v->get<std::string>();
}

namespace {

// The first control character of `text` (controlLength: C0, DEL, C1, U+2028 and U+2029),
// tabs and line breaks allowed when `breaks`; npos when none.
std::size_t controlAt(std::string_view text, bool breaks)
{
    for (std::size_t i = 0; i < text.size(); ++i)
        if (const unsigned char c = static_cast<unsigned char>(text[i]);
            controlLength(text, i) > 0 && !(breaks && (c == '\t' || c == '\n' || c == '\r')))
            return i;
    return std::string_view::npos;
}

} // namespace

std::string JsonNode::optString(std::string_view key, const std::string& fallback) const
{
    const std::string value = optRawString(key, fallback);
    // Text is printed to terminals and shown in the GUI: tabs and line breaks, but no escape
    // sequences, bells or NULs.
    if (const std::size_t i = controlAt(value, true); i != std::string_view::npos)
        fail(key, "expected printable text, got the control character " + controlName(value, i)
                      + " at character " + std::to_string(characterAt(value, i)));
    return value;
}

std::string JsonNode::optLine(std::string_view key, const std::string& fallback) const
{
    const std::string value = optRawString(key, fallback);
    if (const std::size_t i = controlAt(value, false); i != std::string_view::npos)
        fail(key, "expected one line of printable text, got the control character " + controlName(value, i)
                      + " at character " + std::to_string(characterAt(value, i)));
    return value;
}

int JsonNode::reqChoice(std::string_view key, const std::vector<std::string_view>& names) const
{
    const std::string s = reqString(key, false);
    const std::string norm = normalizedName(s);
    int i = 0;
    for (auto name : names) {
        if (normalizedName(name) == norm)
            return i;
        ++i;
    }
    std::string list;
    for (auto name : names)
        list += (list.empty() ? "" : ", ") + std::string("\"") + std::string(name) + "\"";
    fail(key, "expected one of " + list + ", got " + quotedValue(s));
}

int JsonNode::optChoice(std::string_view key, const std::vector<std::string_view>& names, int fallback) const
{
    return has(key) ? reqChoice(key, names) : fallback;
}

int JsonNode::asInt(int min, int max) const
{
    return static_cast<int>(integerOf(*m_value, m_path, min, max));
}

double JsonNode::asDouble(double min, bool minExclusive) const
{
    return numberOf(*m_value, m_path, min, minExclusive, std::numeric_limits<double>::infinity());
}

void JsonNode::warnUnknownKeys(std::initializer_list<std::string_view> known) const
{
    if (!m_value->is_object())
        return;
    // A misspelt key would be passed over and its default taken in silence (a model of
    // "num_expert": 128 read as dense): one that is near a known key is refused, whether or
    // not the reader keeps warnings.
    for (auto it = m_value->begin(); it != m_value->end(); ++it) {
        const std::string_view key = it.key();
        if (std::find(known.begin(), known.end(), key) != known.end())
            continue;
        if (const std::string_view near = nearKey(key, known); !near.empty() && !m_value->contains(near))
            fail(key, "unknown key; did you mean \"" + std::string(near)
                          + "\"? (a misspelt key would be ignored and the default taken)");
    }
    if (!m_context->warnings)
        return;
    // One warning per key up to a score of them, then a count: a million unknown keys would
    // otherwise print a million lines. A long key, or one with control characters, is
    // quoted and cut short (a 50 MB key printed whole made a 50 MB message).
    constexpr std::size_t kListed = 20;
    std::size_t unknown = 0;
    for (auto it = m_value->begin(); it != m_value->end(); ++it) {
        const std::string_view key = it.key();
        if (std::find(known.begin(), known.end(), key) != known.end())
            continue;
        if (++unknown > kListed)
            continue;
        const bool plain = key.size() <= 60 && std::all_of(key.begin(), key.end(), [](char c) {
                               const auto u = static_cast<unsigned char>(c);
                               return u >= 0x20 && u != 0x7f;
                           });
        warn(childPath(plain ? key : std::string_view(describe(nlohmann::json(std::string(key))))) + ": unknown key ignored");
    }
    if (unknown > kListed)
        warn((m_path.empty() ? std::string("document") : m_path) + ": " + std::to_string(unknown - kListed)
             + " more unknown keys ignored");
}

void JsonNode::warn(const std::string& message) const
{
    if (m_context->warnings)
        m_context->warnings->push_back((m_context->file.empty() ? std::string() : m_context->file + ": ") + message);
}

void JsonNode::fail(std::string_view key, const std::string& message) const
{
    throw InputError(m_context->file, childPath(key), message);
}

void JsonNode::failHere(const std::string& message) const
{
    throw InputError(m_context->file, m_path.empty() ? std::string("document") : m_path, message);
}

} // namespace hapmoe::io
