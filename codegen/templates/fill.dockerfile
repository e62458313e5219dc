ARG {{ c.base_tag_arg }}={{ c.base_tag }}
FROM {{ c.base_image }}:{{ c.base_tag_var() }}

{{ intro }}
{{ c.drop_comment }}
# One ARG instruction for several: every instruction is a build step (a container, a commit).
# {{ c.arg_prefix }}_PIP_INDEX_URL: the package index the fill downloads from (a mirror, say).
ARG MOONCAKE_VERSION={{ fill_version }} \
    {{ c.arg_prefix }}_PIP_INDEX_URL=https://pypi.org/simple
# Every *.py of the wheel's package, its subpackages' too, lands where no file is installed
# (a test, not cp -n, whose exit status on a skipped file changed between coreutils releases);
# a subpackage named like an installed native module (x/ beside x.so) would shadow it on
# import, so it is skipped, and said so.
RUN set -eu; \
    dest="$(python3 -c 'import importlib.util; print(list(importlib.util.find_spec("{{ package }}").submodule_search_locations)[0])')"; \
    tmp="$(mktemp -d)"; \
    python3 -m pip install --no-cache-dir --disable-pip-version-check --no-deps \
        --index-url "{{ c.var("PIP_INDEX_URL") }}" --target="$tmp/wheel" "{{ fill_package }}==${MOONCAKE_VERSION}"; \
    native() { for so in "$dest/$1.so" "$dest/$1".*.so; do [ -e "$so" ] && return 0; done; return 1; }; \
    find "$tmp/wheel/{{ package }}" -type f -name '*.py' > "$tmp/files"; \
    sort -o "$tmp/files" "$tmp/files"; \
    while IFS= read -r f; do \
        rel="${f#"$tmp/wheel/{{ package }}/"}"; \
        case "$rel" in \
            */*) top="${rel%%/*}"; \
                if native "$top"; then echo "fill: skipped $rel: $top/ would shadow the native module $top"; continue; fi; \
                [ -e "$dest/$rel" ] || { mkdir -p "$dest/${rel%/*}"; cp "$f" "$dest/$rel"; } ;; \
            *) [ -e "$dest/$rel" ] || cp "$f" "$dest/$rel" ;; \
        esac; \
    done < "$tmp/files"; \
    rm -rf "$tmp"
{% include "import_check.dockerfile" %}
