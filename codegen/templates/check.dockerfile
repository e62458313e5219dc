ARG {{ c.base_tag_arg }}={{ c.base_tag }}
FROM {{ c.base_image }}:{{ c.base_tag_var() }}

{{ intro }}
{{ next }}
{% include "import_check.dockerfile" %}
