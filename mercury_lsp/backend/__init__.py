"""Where the model is, behind one seam: ``session.Session`` (infill, next edit's edit model, the
context budget, ``Capabilities``), implemented by the in-process engine (``local``) and by every
remote backend (``remote_session`` over ``remote``'s wire: a shared ``mercury-lsp http``, an
OpenAI-compatible FIM server such as vLLM / SGLang / llama.cpp's, or Inception's API).
``connect``: the session the settings name; ``shared``: one session served to every HTTP client
(``admission``: its bounded queue); ``prompts``: the FIM formats; ``retrieved``: other files'
code in a prompt; ``outbound``: what may be sent to a remote; ``base``: the errors the HTTP API
maps to status codes."""
