// libuaii_cxx.so: the C++ API (include/uaii) as a shared library for other projects
// (cmake --install: find_package(uaii) target uaii::uaii_cxx, pkg-config uaii-cxx). The
// code is the modules' static libraries, linked whole (lib/api/CMakeLists.txt); this
// file only gives the library a translation unit of its own.
namespace uaii {
// The C++ API's version as the library reports it (the C ABI's, capi/uaii.h).
const char* CxxLibraryVersion() { return "0.5.0"; }
}  // namespace uaii
