# {{ header }}
{{ about }}

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Optional, TypedDict, Union, overload, type_check_only

from typing_extensions import Buffer, Never
{%- for module in imports %}
import {{ module }}
{%- endfor %}
{%- macro def(d, indent) %}
{%- if d.signatures.len() == 1 %}
{%- if let Some(decorator) = d.decorator %}
{{ indent }}{{ decorator }}
{%- endif %}
{{ indent }}def {{ d.name }}{{ d.signatures[0] }}: ...
{%- else %}
{%- for signature in d.signatures %}
{{ indent }}@overload
{%- if let Some(decorator) = d.decorator %}
{{ indent }}{{ decorator }}
{%- endif %}
{{ indent }}def {{ d.name }}{{ signature }}: ...
{%- endfor %}
{%- endif %}
{%- endmacro %}
{%- if pybind11 %}


@type_check_only
class pybind11_type(type):
    """pybind11's metaclass (pybind11_builtins.pybind11_type), every class's here."""
{%- endif %}
{%- for td in typed_dicts %}


@type_check_only
class {{ td.name }}(TypedDict, total=False):
{%- for key in td.keys %}
    {{ key }}: Any
{%- else %}
    ...
{%- endfor %}
{%- endfor %}
{%- for class in classes %}


{% if let Some(decorator) = class.decorator %}{{ decorator }}
{% endif %}class {{ class.name }}{% if pybind11 %}(metaclass=pybind11_type){% endif %}:
{%- for item in class.body %}
{%- match item %}
{%- when Item::Field { name, ty, default } %}
    {{ name }}: {{ ty }}{% if default %} = ...{% endif %}
{%- when Item::Value { name, ty } %}
    {{ name }}: {{ ty }}
{%- when Item::Property { name, writable } %}
    @property
    def {{ name }}(self) -> Any: ...
{%- if writable %}
    @{{ name }}.setter
    def {{ name }}(self, value: Any) -> None: ...
{%- endif %}
{%- when Item::Def(d) %}
{%- call def(d, "    ") %}{% endcall %}
{%- endmatch %}
{%- else %}
    ...
{%- endfor %}
{%- endfor %}
{%- if !functions.is_empty() %}

{% for f in functions %}
{%- call def(f, "") %}{% endcall %}
{%- endfor %}
{%- endif %}
{%- if !values.is_empty() || !aliases.is_empty() %}

{% for (name, ty) in values %}
{{ name }}: {{ ty }}
{%- endfor %}
{%- for (name, target) in aliases %}
{{ name }} = {{ target }}
{%- endfor %}
{%- endif %}
