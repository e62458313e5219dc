ARG {{ c.base_tag_arg }}={{ c.base_tag }}
FROM {{ c.base_image }}:{{ c.base_tag_var() }}

{{ intro }}
{{ c.drop_comment }}
# One ARG instruction for several: every instruction is a build step (a container, a commit).
ARG {{ c.arg_prefix }}_COMMIT={{ commit }} \
    {{ c.arg_prefix }}_SHA256={{ sha256 }} \
    {{ c.arg_prefix }}_BASE_URL={{ raw_base_url }}
# Every file is downloaded and checked against its sha256 before any is installed; a step that
# fails leaves no layer: the image gets every file or none.
RUN set -eu; \
    dest="$(python3 -c 'import importlib.util; print(list(importlib.util.find_spec("{{ package }}").submodule_search_locations)[0])')"; \
    tmp="$(mktemp -d)"; \
    get() { mkdir -p "$tmp/${1%/*}"; curl -fsSL --retry 3 -o "$tmp/$1" "{{ c.var("BASE_URL") }}/{{ repo }}/{{ c.var("COMMIT") }}/$2"; }; \
{%- for f in files %}
    get "{{ f.install }}" "{{ f.path }}"; \
{%- endfor %}
    printf '%s  %s\n' \
{%- for f in files %}
        "{{ f.sha256 }}" "$tmp/{{ f.install }}" \
{%- endfor %}
        > "$tmp/SHA256SUMS"; \
    sha256sum -c "$tmp/SHA256SUMS"; \
{%- for f in files %}
    install -D -m 0644 "$tmp/{{ f.install }}" "$dest/{{ f.in_package }}"; \
{%- endfor %}
    rm -rf "$tmp"
LABEL io.{{ c.name }}.module-commit="{{ c.var("COMMIT") }}" \
      io.{{ c.name }}.module-sha256="{{ c.var("SHA256") }}"
{% include "import_check.dockerfile" %}
