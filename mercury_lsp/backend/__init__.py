"""Where completions and next edits come from: the in-process engine (``local``), or a remote
server (``remote``: a shared ``mercury-lsp http``, an OpenAI-compatible FIM server such as
vLLM / SGLang / llama.cpp's, or Inception's API). ``prompts``: the FIM prompt formats;
``admission``: the bounded queue; ``base``: the protocol and its errors."""
