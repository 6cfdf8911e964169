// posenc: the earlier name of posenc/rope_config.hpp (RoPE parameters read from model
// configurations), kept so that existing includes still work.
#pragma once

#include "posenc/rope_config.hpp"
