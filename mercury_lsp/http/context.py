"""What every route needs: the backend, the settings, and the checks they share."""

from __future__ import annotations

import time
from dataclasses import dataclass

from mercury_lsp.backend.base import NotReady
from mercury_lsp.backend.shared import SharedBackend
from mercury_lsp.engine_client import CancelToken
from mercury_lsp.http.errors import ApiError, from_backend
from mercury_lsp.http.settings import HttpSettings


@dataclass
class ApiContext:
    backend: SharedBackend
    settings: HttpSettings

    @property
    def model(self) -> str:
        return self.backend.status().model

    def check_model(self, requested: str | None) -> str:
        """The served model's id; a request naming another one gets a 404, as OpenAI's does (503
        first while the model loads: its id is known once it is loaded)."""
        self.require_ready()
        model = self.model
        if requested is not None and requested != model:
            raise ApiError(404, f"the model {requested[:100]!r} does not exist; this server serves {model!r} "
                           "(GET /v1/models)", param="model", code="model_not_found")
        return model

    def cancel_token(self) -> CancelToken:
        return CancelToken(deadline=time.monotonic() + self.settings.limits.request_timeout_s)

    def require_ready(self) -> None:
        st = self.backend.status()
        if st.state != "ready":
            raise from_backend(NotReady(f"the model failed to load: {st.message}" if st.state == "error"
                                        else "the model is still loading; retry shortly"))
