# Runs a Python application from a virtual environment built in a separate stage.
# Adapt: the Python version, requirements.txt (or your lock file), the start command and the port.

FROM python:3.12.8-slim-bookworm AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
RUN python -m venv /opt/venv
ENV PATH="/opt/venv/bin:$PATH"
COPY requirements.txt /tmp/requirements.txt
RUN pip install -r /tmp/requirements.txt

# Runtime stage: the interpreter plus the prepared virtual environment.
FROM python:3.12.8-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PATH="/opt/venv/bin:$PATH"
RUN groupadd --system app \
    && useradd --system --gid app --home-dir /app --no-create-home --shell /usr/sbin/nologin app
COPY --from=build /opt/venv /opt/venv
WORKDIR /app
COPY --chown=app:app . /app

USER app
EXPOSE 8000
# For a web application use your server, e.g. ["gunicorn", "--bind", "0.0.0.0:8000", "app:app"].
CMD ["python", "-m", "app"]
