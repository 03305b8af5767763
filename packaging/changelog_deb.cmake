# Writes the Debian changelog (/usr/share/doc/freshd/changelog.Debian.gz)
# from CHANGELOG.md, so that the package's changelog is never a second,
# hand-kept copy. Run as a script (cmake -P) at packaging time:
#   cmake -DCHANGELOG=CHANGELOG.md -DOUTPUT=changelog.Debian
#         -DPACKAGE=freshd -DVERSION=0.1.0 -DREVISION=1
#         -DMAINTAINER="Name <address>" -P changelog_deb.cmake
# writes OUTPUT and OUTPUT.gz (gzip -9n: no name or timestamp, so the
# package is reproducible). Every "## [X.Y.Z] - YYYY-MM-DD" section becomes
# one entry "PACKAGE (X.Y.Z-REVISION) unstable; urgency=medium", its
# paragraphs and "- " items "  * " lines (a "### Group" heading prefixes its
# items with "Group: "), wrapped at 78 columns, markdown marks dropped;
# the "## [Unreleased]" section and the text before the first release are
# left out. Fails unless the newest release is VERSION (bump both together).
cmake_minimum_required(VERSION 3.20)
foreach(_var CHANGELOG OUTPUT PACKAGE VERSION REVISION MAINTAINER)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "changelog_deb.cmake: ${_var} is not set")
  endif()
endforeach()

file(STRINGS "${CHANGELOG}" _lines ENCODING UTF-8)

set(_out "")
set(_entry_open FALSE)  # inside a release section
set(_first_version "")
set(_group "")
set(_item "")  # the item or paragraph being gathered

# Appends "  * TEXT" wrapped at 78 columns (continuations indented 4).
function(_emit_item text)
  string(REGEX REPLACE "[`*]" "" text "${text}")
  string(REGEX REPLACE "\\[([^]]*)\\]\\([^)]*\\)" "\\1" text "${text}")
  string(REGEX REPLACE "  +" " " text "${text}")
  string(STRIP "${text}" text)
  if(text STREQUAL "")
    return()
  endif()
  string(REPLACE ";" "\\;" text "${text}")
  string(REPLACE " " ";" _words "${text}")
  set(_line "  *")
  set(_block "")
  foreach(_w IN LISTS _words)
    string(LENGTH "${_line} ${_w}" _len)
    if(_len GREATER 78 AND NOT _line STREQUAL "  *" AND NOT _line STREQUAL "   ")
      string(APPEND _block "${_line}\n")
      set(_line "   ")
    endif()
    string(APPEND _line " ${_w}")
  endforeach()
  string(APPEND _block "${_line}\n")
  set(_out "${_out}${_block}" PARENT_SCOPE)
endfunction()

macro(_flush_item)
  if(NOT _item STREQUAL "")
    if(_group STREQUAL "")
      _emit_item("${_item}")
    else()
      _emit_item("${_group}: ${_item}")
    endif()
    set(_item "")
  endif()
endmacro()

macro(_close_entry)
  _flush_item()
  if(_entry_open)
    execute_process(COMMAND date -R -u -d "${_date}"
                    OUTPUT_VARIABLE _when OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR "changelog_deb.cmake: bad date ${_date}")
    endif()
    string(APPEND _out "\n -- ${MAINTAINER}  ${_when}\n\n")
    set(_entry_open FALSE)
  endif()
endmacro()

foreach(_raw IN LISTS _lines)
  set(_l "${_raw}")
  if(_l MATCHES "^## \\[([0-9]+\\.[0-9]+\\.[0-9]+)\\] - ([0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9])")
    _close_entry()
    set(_version "${CMAKE_MATCH_1}")
    set(_date "${CMAKE_MATCH_2}")
    if(_first_version STREQUAL "")
      set(_first_version "${_version}")
    endif()
    string(APPEND _out
           "${PACKAGE} (${_version}-${REVISION}) unstable; urgency=medium\n\n")
    set(_entry_open TRUE)
    set(_group "")
  elseif(_l MATCHES "^## ")
    _close_entry()  # [Unreleased], the compatibility promise: not released
  elseif(NOT _entry_open)
    # the text before the first release
  elseif(_l MATCHES "^### (.*)$")
    _flush_item()
    set(_group "${CMAKE_MATCH_1}")
  elseif(_l MATCHES "^- (.*)$")
    _flush_item()
    set(_item "${CMAKE_MATCH_1}")
  elseif(_l MATCHES "^[ \t]*$")
    _flush_item()
  else()
    string(STRIP "${_l}" _l)
    if(_item STREQUAL "")
      set(_item "${_l}")
    else()
      string(APPEND _item " ${_l}")
    endif()
  endif()
endforeach()
_close_entry()

if(NOT _first_version STREQUAL VERSION)
  message(FATAL_ERROR "changelog_deb.cmake: the newest release in "
          "${CHANGELOG} is '${_first_version}', the project's version is "
          "${VERSION}: add its section (or bump project(VERSION))")
endif()
string(REGEX REPLACE "\n\n$" "\n" _out "${_out}")
file(WRITE "${OUTPUT}" "${_out}")
execute_process(COMMAND gzip -9nf "${OUTPUT}" RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "changelog_deb.cmake: gzip failed")
endif()
