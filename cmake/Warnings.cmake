# Warnings on for our own targets (dependencies' headers are SYSTEM includes), and the
# sanitizer builds: UAII_SANITIZE (AddressSanitizer + UBSan) and UAII_TSAN
# (ThreadSanitizer, scripts/tsan.sh). They cannot be combined.
add_compile_options(-Wall -Wextra -Wno-unused-parameter)
if(UAII_SANITIZE AND UAII_TSAN)
  message(FATAL_ERROR "uaii: UAII_SANITIZE (ASan) and UAII_TSAN cannot be combined; use two build directories")
endif()
if(UAII_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
if(UAII_TSAN)
  add_compile_options(-fsanitize=thread -g1 -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()
