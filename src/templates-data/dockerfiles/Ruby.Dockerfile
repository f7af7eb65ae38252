# Runs a Ruby (Rack, Sinatra, Rails ...) application; gems are compiled in a build stage.
# Adapt: the Ruby version, the system packages for your gems, the start command and the port.

FROM ruby:3.3.6-slim-bookworm AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential libyaml-dev \
    && rm -rf /var/lib/apt/lists/*
ENV BUNDLE_DEPLOYMENT=1 BUNDLE_WITHOUT="development:test" BUNDLE_PATH=/usr/local/bundle
WORKDIR /app
COPY Gemfile Gemfile.lock ./
RUN bundle install --jobs 4 \
    && rm -rf /usr/local/bundle/cache
COPY . .

# Runtime stage: no compilers; add runtime libraries (e.g. libpq5) if your gems need them.
FROM ruby:3.3.6-slim-bookworm
ENV BUNDLE_DEPLOYMENT=1 BUNDLE_WITHOUT="development:test" BUNDLE_PATH=/usr/local/bundle
RUN groupadd --system app \
    && useradd --system --gid app --home-dir /app --no-create-home --shell /usr/sbin/nologin app
WORKDIR /app
COPY --from=build /usr/local/bundle /usr/local/bundle
COPY --from=build --chown=app:app /app /app

USER app
EXPOSE 9292
CMD ["bundle", "exec", "rackup", "--host", "0.0.0.0", "--port", "9292"]
