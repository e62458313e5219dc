ARG {{ c.base_tag_arg }}={{ c.base_tag }}
FROM {{ c.base_image }}:{{ c.base_tag_var() }}

{{ intro }}
{{ c.drop_comment }}
# One ARG instruction for several: every instruction is a build step (a container, a commit).
# {{ c.arg_prefix }}_PIP_INDEX_URL: the package index the fill downloads from (a mirror, say).
ARG MOONCAKE_VERSION={{ fill_version }} \
    {{ c.arg_prefix }}_PIP_INDEX_URL=https://pypi.org/simple
# The loop is `cp -n` with one meaning on every coreutils: cp -n's exit status on a skipped
# file changed between releases.
RUN set -eu; \
    dest="$(python3 -c 'import importlib.util; print(list(importlib.util.find_spec("{{ package }}").submodule_search_locations)[0])')"; \
    tmp="$(mktemp -d)"; \
    python3 -m pip install --no-cache-dir --disable-pip-version-check --no-deps \
        --index-url "{{ c.var("PIP_INDEX_URL") }}" --target="$tmp" "{{ fill_package }}==${MOONCAKE_VERSION}"; \
    for f in "$tmp"/{{ package }}/*.py; do \
        [ -e "$dest/${f##*/}" ] || cp "$f" "$dest/"; \
    done; \
    rm -rf "$tmp"
{% include "import_check.dockerfile" %}
