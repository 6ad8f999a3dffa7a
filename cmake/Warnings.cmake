# Warnings are PRIVATE options of each target, never global.
function(hapmoe_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-unused-parameter)
endfunction()
