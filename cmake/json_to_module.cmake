# cmake -DIN=x.json -DOUT=x.js -P json_to_module.cmake: wraps a JSON file as an ES module's default
# export, so the package can import its data with no JSON-module support or fetch.
file(READ "${IN}" content)
file(WRITE "${OUT}.tmp" "// Generated from ${IN_NAME} at build time; edit that file instead.\nexport default ${content};\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
