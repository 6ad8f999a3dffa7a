# Desktop integration files and CPack packages (DEB and TGZ on Linux).
include(GNUInstallDirs)
if(HAPMOE_BUILD_GUI)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/io.github.hapmoe.Studio.desktop
          DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/io.github.hapmoe.Studio.metainfo.xml
          DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/hapmoe-mime.xml
          DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages RENAME io.github.hapmoe.Studio.xml)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/io.github.hapmoe.Studio.svg
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
endif()

set(CPACK_PACKAGE_NAME "hapmoe-studio")
set(CPACK_PACKAGE_VENDOR "HAPMoE Studio")
set(CPACK_PACKAGE_CONTACT "HAPMoE Studio maintainers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_GENERATOR "TGZ")
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  list(APPEND CPACK_GENERATOR "DEB")
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  set(CPACK_DEBIAN_PACKAGE_SECTION "science")
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
endif()
include(CPack)
