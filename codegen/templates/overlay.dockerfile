ARG {{ c.base_tag_arg }}={{ c.base_tag }}
FROM {{ c.base_image }}:{{ c.base_tag_var() }}

{{ intro }}
{{ c.drop_comment }}
# One ARG instruction for several: every instruction is a build step (a container, a commit).
ARG {{ c.arg_prefix }}_COMMIT={{ commit }} \
    {{ c.arg_prefix }}_SHA256={{ sha256 }} \
    {{ c.arg_prefix }}_BASE_URL={{ raw_base_url }}
RUN set -eu; \
    dest="$(python3 -c 'import importlib.util; print(list(importlib.util.find_spec("{{ package }}").submodule_search_locations)[0])')"; \
    tmp="$(mktemp)"; \
    curl -fsSL --retry 3 -o "$tmp" \
        "{{ c.var("BASE_URL") }}/{{ repo }}/{{ c.var("COMMIT") }}/{{ upstream_path }}"; \
    printf '%s  %s\n' "{{ c.var("SHA256") }}" "$tmp" > "$tmp.sha256"; \
    sha256sum -c "$tmp.sha256"; \
    install -m 0644 "$tmp" "$dest/{{ file_name }}"; \
    rm -f "$tmp" "$tmp.sha256"
{% include "import_check.dockerfile" %}
