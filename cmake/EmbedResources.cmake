# Embeds text resources (JSON) into a generated C++ source so the core finds its
# built-in catalog and presets without any install path.
#   hapmoe_embed_resources(OUTPUT <file.cpp> NAMESPACE <ns> FILES <f1> <f2> ...)
# The generated file defines
#   const std::vector<std::pair<std::string_view, std::string_view>>& ns::embeddedResources();
# with keys relative to RESOURCE_ROOT.
function(hapmoe_embed_resources)
  cmake_parse_arguments(ER "" "OUTPUT;NAMESPACE;RESOURCE_ROOT" "FILES" ${ARGN})
  add_custom_command(
    OUTPUT ${ER_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${ER_OUTPUT} -DNAMESPACE=${ER_NAMESPACE}
            -DROOT=${ER_RESOURCE_ROOT} "-DFILES=${ER_FILES}"
            -P ${PROJECT_SOURCE_DIR}/cmake/EmbedResourcesScript.cmake
    DEPENDS ${ER_FILES} ${PROJECT_SOURCE_DIR}/cmake/EmbedResourcesScript.cmake
    COMMENT "Embedding built-in resources"
    VERBATIM)
endfunction()
