// posteriordb's Minnesota radon data compiled in (models/radon.hpp; data/README.md): the JSON
// text, which the CLI parses as it parses --data.

#include <string_view>

#include "myriad/models/radon.hpp"

namespace myriad::models {

std::string_view radon_minnesota_json() {
  static constexpr char kText[] =
#include "radon_minnesota_json.inc"
      ;
  return {kText, sizeof(kText) - 1};
}

}  // namespace myriad::models
