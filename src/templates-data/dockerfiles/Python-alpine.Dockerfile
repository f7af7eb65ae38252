# Runs a Python application on Alpine Linux. Packages without musl wheels are compiled in the build stage.
# Adapt: the Python version, requirements.txt, the build packages, the start command and the port.

FROM python:3.12.8-alpine3.21 AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
# Compilers and headers, needed only while wheels are built.
RUN apk add --no-cache build-base libffi-dev
RUN python -m venv /opt/venv
ENV PATH="/opt/venv/bin:$PATH"
COPY requirements.txt /tmp/requirements.txt
RUN pip install -r /tmp/requirements.txt

FROM python:3.12.8-alpine3.21
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PATH="/opt/venv/bin:$PATH"
# Runtime libraries only (no compilers); add what your packages link against.
RUN apk add --no-cache libffi \
    && addgroup -S app \
    && adduser -S -G app -H -h /app -s /sbin/nologin app
COPY --from=build /opt/venv /opt/venv
WORKDIR /app
COPY --chown=app:app . /app

USER app
EXPOSE 8000
CMD ["python", "-m", "app"]
