# Warnings on for our own targets (dependencies' headers are SYSTEM includes).
add_compile_options(-Wall -Wextra -Wno-unused-parameter)
if(UAII_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
