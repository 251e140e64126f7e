#!/usr/bin/env python3
"""litellm_ids.py - print the deployment ids LiteLLM 1.80.11 would give a config.

Reproduces, with PyYAML, the parts of LiteLLM's proxy that decide a
deployment's id: yaml.safe_load, include: merging (ProxyConfig._process_includes),
os.environ/ resolution (_check_for_os_environ_vars + get_secret's str_to_bool)
and Router._generate_model_id. Used to cross-check switchyard's loader:

    tests/config/litellm_ids.py tests/config/litellm-configs/07-azure-underscore-ints.yaml

Every os.environ/NAME is resolved to "dummy-NAME" (as the C corpus test sets
them), so the output does not depend on the caller's environment.
Output: one line per deployment, "<model_name>\\t<id>".
"""
import hashlib
import json
import os
import re
import sys

import yaml


def load(path):
    with open(path) as f:
        return yaml.safe_load(f)


def process_includes(config, base_dir):
    if "include" not in config:
        return config
    root = dict(config)
    del root["include"]
    for inc in config["include"]:
        sub = load(os.path.join(base_dir, inc))
        for k, v in sub.items():
            if isinstance(v, list) and k in root:
                root[k].extend(v)
            else:
                root[k] = v
    return root


def secret(value):
    name = value.replace("os.environ/", "")
    v = "dummy-" + name
    if v.strip().lower() == "true":
        return True
    if v.strip().lower() == "false":
        return False
    return v


def resolve(config, depth=0):
    if depth > 100:
        return config
    for k, v in config.items():
        if isinstance(v, dict):
            config[k] = resolve(v, depth + 1)
        elif isinstance(v, list):
            for item in v:
                if isinstance(item, dict):
                    resolve(item, depth + 1)
        elif isinstance(v, str) and v.startswith("os.environ/"):
            config[k] = secret(v)
    return config


def model_id(group, params):
    s = group
    for k, v in params.items():
        s += k if isinstance(k, str) else json.dumps(k) if isinstance(k, dict) else str(k)
        s += v if isinstance(v, str) else json.dumps(v) if isinstance(v, dict) else str(v)
    return hashlib.sha256(s.encode()).hexdigest()


def main(path):
    config = process_includes(load(path), os.path.dirname(os.path.abspath(path)))
    config = resolve(config)
    for m in config.get("model_list") or []:
        info = m.get("model_info") or {}
        mid = info.get("id")
        if mid is None:
            mid = model_id(m["model_name"], m.get("litellm_params") or {})
        print("%s\t%s" % (m["model_name"], mid))


if __name__ == "__main__":
    for p in sys.argv[1:]:
        main(p)
