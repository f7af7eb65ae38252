# Builds a Java application with Maven and runs it on an OpenJDK runtime (Eclipse Temurin build).
# Adapt: the Java version, the jar name (target/app.jar; set <finalName> in pom.xml), the port.
# Using Gradle? Build with a gradle:8.11.1-jdk21 stage and copy build/libs/*.jar instead.

FROM maven:3.9.9-eclipse-temurin-21 AS build
WORKDIR /src
# Resolve dependencies first so they stay cached while only the sources change.
COPY pom.xml ./
RUN mvn -B -q dependency:go-offline
COPY src ./src
RUN mvn -B -q -DskipTests package

# Runtime stage: a JRE only, no compiler or build tool.
FROM eclipse-temurin:21.0.5_11-jre-noble
RUN groupadd --system app \
    && useradd --system --gid app --no-create-home --shell /usr/sbin/nologin app
WORKDIR /app
COPY --from=build /src/target/app.jar /app/app.jar

USER app
EXPOSE 8080
# The JVM sizes its heap from the container's memory limit; tune the percentage if needed.
ENTRYPOINT ["java", "-XX:MaxRAMPercentage=75", "-jar", "/app/app.jar"]
