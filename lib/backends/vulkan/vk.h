// Vulkan-Hpp as this backend uses it: the dispatcher loaded at run time
// (VULKAN_HPP_DISPATCH_LOADER_DYNAMIC, set for uaii_backends by CMakeLists.txt).
#pragma once
#include <vulkan/vulkan.hpp>
