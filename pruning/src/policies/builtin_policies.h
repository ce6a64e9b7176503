// The policies that ship with winnow, registered by PolicyRegistry's constructor.
#pragma once

namespace winnow {

class PolicyRegistry;

void register_builtin_policies(PolicyRegistry& registry);

}  // namespace winnow
