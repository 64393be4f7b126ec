# Compiler warnings for our own targets; TENSORACLE_WERROR turns them into errors (CI does).
function(tensoracle_warnings target)
    if(MSVC)
        target_compile_options(${target} PRIVATE /W4 $<$<BOOL:${TENSORACLE_WERROR}>:/WX>)
    else()
        target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
            -Wsign-conversion -Wnon-virtual-dtor -Wold-style-cast
            $<$<BOOL:${TENSORACLE_WERROR}>:-Werror>)
    endif()
    if(TENSORACLE_SANITIZE)
        target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer)
        target_link_options(${target} PRIVATE -fsanitize=address,undefined)
    endif()
endfunction()
